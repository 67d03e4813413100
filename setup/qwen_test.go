package setup

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A Qwen Code settings.json with keys, a hook and an MCP server of the
// user's own, formatted by hand.
const qwenSettings = `{
  "memory": { "enableManagedAutoMemory": false },
  "hooks": {
    "PreCompact": [
      { "matcher": "manual", "hooks": [ { "type": "command", "command": "~/bin/save-state.sh", "timeout": 5 } ] }
    ]
  },
  "mcpServers": { "github": { "command": "gh-mcp", "args": [] } },
  "ui": { "theme": "<&>" }
}
`

func TestQwenInstallIdempotentUninstall(t *testing.T) {
	for _, scope := range []Scope{ScopeUser, ScopeProject} {
		h, p := t.TempDir(), t.TempDir()
		dir := filepath.Join(h, ".qwen")
		if scope == ScopeProject {
			dir = filepath.Join(p, ".qwen")
		}
		path := filepath.Join(dir, "settings.json")
		_ = os.MkdirAll(dir, 0o755)
		if err := os.WriteFile(path, []byte(qwenSettings), 0o644); err != nil {
			t.Fatal(err)
		}
		o := Options{Scope: scope, Home: h, Project: p, Command: "/opt/bin/ctxfold"}
		run := func(o Options) []*Change {
			t.Helper()
			return applyPlan(t, Qwen, o)
		}
		run(o)
		m := decode(t, path)
		if m["memory"] == nil || m["ui"].(map[string]any)["theme"] != "<&>" {
			t.Fatalf("%s: other keys changed: %v", scope, m)
		}
		hooks := m["hooks"].(map[string]any)
		if _, ok := hooks["SessionStart"]; ok {
			t.Fatalf("%s: a SessionStart hook: its context never reaches a request after /compress in qwen -p", scope)
		}
		want := `"/opt/bin/ctxfold hook --client 'Qwen Code' --by-setup"`
		for _, ev := range []string{"PreCompact", "PostCompact", "UserPromptSubmit"} {
			b, _ := json.Marshal(hooks[ev])
			if !strings.Contains(string(b), want) || !strings.Contains(string(b), `"timeout":60`) {
				t.Fatalf("%s: %s hook %s", scope, ev, b)
			}
		}
		if pre, _ := json.Marshal(hooks["PreCompact"]); !strings.Contains(string(pre), "save-state.sh") {
			t.Fatalf("%s: the user's PreCompact hook is gone: %s", scope, pre)
		}
		srv := m["mcpServers"].(map[string]any)
		ours, _ := json.Marshal(srv["ctxfold"])
		if srv["github"] == nil || string(ours) != `{"alwaysLoadTools":true,"args":["mcp"],"command":"/opt/bin/ctxfold","env":{"CTXFOLD_CLIENT":"qwen-code"},"trust":true}` {
			t.Fatalf("%s: mcpServers %s", scope, ours)
		}
		if b, _ := os.ReadFile(path + BackupSuffix); string(b) != qwenSettings {
			t.Fatalf("%s: no backup of the original bytes", scope)
		}
		installed, _ := os.ReadFile(path)
		for _, c := range run(o) {
			if c.Action != "unchanged" {
				t.Fatalf("%s: second run: %s %s", scope, c.Action, c.Path)
			}
		}
		if b, _ := os.ReadFile(path); string(b) != string(installed) {
			t.Fatalf("%s: second run changed the bytes", scope)
		}
		o.Uninstall = true
		run(o)
		if b, _ := os.ReadFile(path); string(b) != qwenSettings {
			t.Fatalf("%s: uninstall did not restore the original bytes:\n%s", scope, b)
		}
	}
}

// The hook runs as the client's shell runs it: the quoted client name is
// one word, the dialect Qwen Code's; a command setup did not write is kept
// on uninstall and reported.
func TestQwenHookCommandAndForeignEntries(t *testing.T) {
	h := t.TempDir()
	path := filepath.Join(h, ".qwen", "settings.json")
	_ = os.MkdirAll(filepath.Dir(path), 0o755)
	own := `{"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"my-wrapper hook --client Other"}]}]},` +
		`"mcpServers":{"ctxfold":{"command":"ctxfold","args":["mcp","--transcript","x"]}}}`
	_ = os.WriteFile(path, []byte(own), 0o644)
	o := Options{Scope: ScopeUser, Home: h, Command: "/opt/my tools/ctxfold", Uninstall: true}
	cs := applyPlan(t, Qwen, o)
	if b, _ := os.ReadFile(path); string(b) != own {
		t.Fatalf("uninstall changed entries setup did not write:\n%s", b)
	}
	if got := strings.Join(cs[0].Did, "; "); !strings.Contains(got, "kept the UserPromptSubmit hook") || !strings.Contains(got, "kept the MCP server") {
		t.Fatalf("did %q", got)
	}
	if w := shellWords(command(o.Command, qwenHookCommand)); !slices.Equal(w, []string{"/opt/my tools/ctxfold", "hook", "--client", "Qwen Code", Marker}) {
		t.Fatalf("the hook command splits into %q", w)
	}
}

// QWEN_HOME moves the user's settings, as it moves the client's; doctor
// finds what setup installed there.
func TestQwenHomeAndInspect(t *testing.T) {
	h, moved := t.TempDir(), t.TempDir()
	o := Options{Scope: ScopeUser, Home: h, Command: "/opt/bin/ctxfold",
		Getenv: func(k string) string { return map[string]string{"QWEN_HOME": moved}[k] }}
	if _, err := Run(context.Background(), ClientQwen, o, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(moved, "settings.json")); err != nil {
		t.Fatalf("not under QWEN_HOME: %v", err)
	}
	if _, err := os.Stat(filepath.Join(h, ".qwen", "settings.json")); err == nil {
		t.Fatal("written under ~/.qwen despite QWEN_HOME")
	}
	in, err := Inspect(ClientQwen, o)
	if err != nil || len(in.Missing) != 0 || len(in.Entries) != 4 {
		t.Fatalf("inspect: %+v, %v", in, err)
	}
}

func TestQwenUnparseableUntouched(t *testing.T) {
	h := t.TempDir()
	path := filepath.Join(h, ".qwen", "settings.json")
	_ = os.MkdirAll(filepath.Dir(path), 0o755)
	bad := "{\n  // a comment: not plain JSON\n  \"hooks\": {}\n}\n"
	_ = os.WriteFile(path, []byte(bad), 0o644)
	_, err := Qwen(Options{Scope: ScopeUser, Home: h})
	if err == nil || !strings.Contains(err.Error(), "not valid JSON, left untouched") {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != bad {
		t.Fatal("the unparseable file changed")
	}
}
