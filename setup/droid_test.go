package setup

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Droid hooks.json (events at the top level) and mcp.json of the user's
// own, formatted by hand.
const (
	droidHooksJSON = `{
  "PostToolUse": [
    { "matcher": "Edit|Create", "hooks": [ { "type": "command", "command": "~/bin/fmt.sh" } ] }
  ],
  "showHookOutput": true
}
`
	droidMCPJSON = `{ "mcpServers": { "github": { "type": "stdio", "command": "gh-mcp", "args": [] } } }
`
)

func TestDroidInstallIdempotentUninstall(t *testing.T) {
	for _, scope := range []Scope{ScopeUser, ScopeProject} {
		h, p := t.TempDir(), t.TempDir()
		dir := filepath.Join(h, ".factory")
		if scope == ScopeProject {
			dir = filepath.Join(p, ".factory")
		}
		hooksPath, mcpPath := filepath.Join(dir, "hooks.json"), filepath.Join(dir, "mcp.json")
		_ = os.MkdirAll(dir, 0o755)
		for path, b := range map[string]string{hooksPath: droidHooksJSON, mcpPath: droidMCPJSON} {
			if err := os.WriteFile(path, []byte(b), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		o := Options{Scope: scope, Home: h, Project: p, Command: "/opt/bin/ctxfold"}
		applyPlan(t, Droid, o)
		m := decode(t, hooksPath)
		post, _ := json.Marshal(m["PostToolUse"])
		ups, _ := json.Marshal(m["UserPromptSubmit"])
		if m["showHookOutput"] != true || !strings.Contains(string(post), "fmt.sh") ||
			!strings.Contains(string(post), `{"hooks":[{"command":"/opt/bin/ctxfold hook --client Droid --by-setup","timeout":60,"type":"command"}],"matcher":"*"}`) ||
			!strings.Contains(string(ups), `"/opt/bin/ctxfold hook --client Droid --by-setup"`) || m["PreCompact"] == nil || m["hooks"] != nil {
			t.Fatalf("%s: hooks.json %v", scope, m)
		}
		srv := decode(t, mcpPath)["mcpServers"].(map[string]any)
		ours, _ := json.Marshal(srv["ctxfold"])
		if srv["github"] == nil || string(ours) != `{"args":["mcp"],"command":"/opt/bin/ctxfold","env":{"CTXFOLD_CLIENT":"droid"},"type":"stdio"}` {
			t.Fatalf("%s: mcpServers %v", scope, srv)
		}
		in, err := Inspect(ClientDroid, o)
		if err != nil || len(in.Missing) != 0 || len(in.Entries) != 4 {
			t.Fatalf("%s: doctor's view: %+v %v", scope, in, err)
		}
		installed, _ := os.ReadFile(hooksPath)
		for _, c := range applyPlan(t, Droid, o) {
			if c.Action != "unchanged" {
				t.Fatalf("%s: second run: %s %s", scope, c.Action, c.Path)
			}
		}
		if b, _ := os.ReadFile(hooksPath); string(b) != string(installed) {
			t.Fatalf("%s: second run changed the bytes", scope)
		}
		o.Uninstall = true
		applyPlan(t, Droid, o)
		for path, want := range map[string]string{hooksPath: droidHooksJSON, mcpPath: droidMCPJSON} {
			if b, _ := os.ReadFile(path); string(b) != want {
				t.Fatalf("%s: uninstall did not restore %s:\n%s", scope, path, b)
			}
		}
	}
}

// Without a hooks.json, hooks settings.json declares stay where they are
// (a hooks.json would hide the same events of settings.json): setup merges
// into settings.json, and its other keys keep their bytes. With neither,
// setup creates hooks.json and mcp.json, and uninstall removes them.
func TestDroidHooksFileChoice(t *testing.T) {
	h := t.TempDir()
	dir := filepath.Join(h, ".factory")
	_ = os.MkdirAll(dir, 0o755)
	settings := filepath.Join(dir, "settings.json")
	const own = `{"customModels":[{"model":"m"}],"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"~/bin/log.sh"}]}]}}` + "\n"
	_ = os.WriteFile(settings, []byte(own), 0o644)
	o := Options{Scope: ScopeUser, Home: h, Command: "ctxfold"}
	applyPlan(t, Droid, o)
	if _, err := os.Stat(filepath.Join(dir, "hooks.json")); !os.IsNotExist(err) {
		t.Fatal("setup created a hooks.json that hides settings.json's hooks")
	}
	b, _ := os.ReadFile(settings)
	if !strings.Contains(string(b), `[{"model":"m"}]`) || !strings.Contains(string(b), "log.sh") || !strings.Contains(string(b), "hook --client Droid --by-setup") {
		t.Fatalf("settings.json:\n%s", b)
	}
	for _, c := range applyPlan(t, Droid, o) {
		if c.Action != "unchanged" {
			t.Fatalf("second run: %s %s", c.Action, c.Path)
		}
	}
	o.Uninstall = true
	applyPlan(t, Droid, o)
	if b, _ := os.ReadFile(settings); string(b) != own {
		t.Fatalf("uninstall did not restore settings.json:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "mcp.json")); !os.IsNotExist(err) {
		t.Fatal("the mcp.json setup created is still there")
	}

	h = t.TempDir()
	o = Options{Scope: ScopeUser, Home: h, Command: "ctxfold"}
	cs := applyPlan(t, Droid, o)
	if len(cs) != 2 || cs[0].Action != "create" || filepath.Base(cs[0].Path) != "hooks.json" || cs[1].Action != "create" {
		t.Fatalf("fresh install: %+v", cs)
	}
	o.Uninstall = true
	applyPlan(t, Droid, o)
	if es, _ := os.ReadDir(filepath.Join(h, ".factory")); len(es) != 0 {
		t.Fatalf("uninstall left %v", es)
	}
}

func TestDroidUnparseableUntouched(t *testing.T) {
	h := t.TempDir()
	path := filepath.Join(h, ".factory", "hooks.json")
	_ = os.MkdirAll(filepath.Dir(path), 0o755)
	bad := "{\n  \"PreCompact\": [,\n}\n"
	_ = os.WriteFile(path, []byte(bad), 0o644)
	if _, err := Droid(Options{Scope: ScopeUser, Home: h}); err == nil || !strings.Contains(err.Error(), "not valid JSON, left untouched") {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != bad {
		t.Fatal("the unparseable file changed")
	}
}

// doctor reads a home with no .factory folder: nothing installed, no error.
func TestDroidInspectNothing(t *testing.T) {
	in, err := Inspect(ClientDroid, Options{Scope: ScopeUser, Home: t.TempDir()})
	if err != nil || len(in.Entries) != 0 || len(in.Missing) != 4 {
		t.Fatalf("%+v %v", in, err)
	}
}
