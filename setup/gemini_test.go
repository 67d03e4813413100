package setup

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Gemini CLI settings.json with keys, a hook and an MCP server of the
// user's own, formatted by hand.
const geminiSettings = `{
  "security": { "auth": { "selectedType": "gemini-api-key" } },
  "hooks": {
    "PreCompress": [
      { "hooks": [ { "type": "command", "command": "~/bin/save-state.sh", "timeout": 5000 } ] }
    ]
  },
  "mcpServers": { "github": { "command": "gh-mcp", "args": [] } },
  "ui": { "theme": "<&>" }
}
`

func TestGeminiInstallIdempotentUninstall(t *testing.T) {
	for _, scope := range []Scope{ScopeUser, ScopeProject} {
		h, p := t.TempDir(), t.TempDir()
		dir := filepath.Join(h, ".gemini")
		if scope == ScopeProject {
			dir = filepath.Join(p, ".gemini")
		}
		path := filepath.Join(dir, "settings.json")
		_ = os.MkdirAll(dir, 0o755)
		if err := os.WriteFile(path, []byte(geminiSettings), 0o644); err != nil {
			t.Fatal(err)
		}
		o := Options{Scope: scope, Home: h, Project: p, Command: "/opt/bin/ctxfold"}
		run := func(o Options) []*Change {
			t.Helper()
			return applyPlan(t, Gemini, o)
		}
		run(o)
		m := decode(t, path)
		if m["security"] == nil || m["ui"].(map[string]any)["theme"] != "<&>" {
			t.Fatalf("%s: other keys changed: %v", scope, m)
		}
		hooks := m["hooks"].(map[string]any)
		pre, _ := json.Marshal(hooks["PreCompress"])
		ba, _ := json.Marshal(hooks["BeforeAgent"])
		if !strings.Contains(string(pre), "save-state.sh") || !strings.Contains(string(pre), `"/opt/bin/ctxfold hook --client Gemini --by-setup"`) ||
			!strings.Contains(string(ba), `"timeout":60000`) {
			t.Fatalf("%s: hooks %s %s", scope, pre, ba)
		}
		srv := m["mcpServers"].(map[string]any)
		ours, _ := json.Marshal(srv["ctxfold"])
		if srv["github"] == nil || string(ours) != `{"args":["mcp"],"command":"/opt/bin/ctxfold","env":{"CTXFOLD_CLIENT":"gemini"},"trust":true}` {
			t.Fatalf("%s: mcpServers %v", scope, srv)
		}
		if b, _ := os.ReadFile(path + BackupSuffix); string(b) != geminiSettings {
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
		if b, _ := os.ReadFile(path); string(b) != geminiSettings {
			t.Fatalf("%s: uninstall did not restore the original bytes:\n%s", scope, b)
		}
	}
}

func TestGeminiUnparseableUntouched(t *testing.T) {
	h := t.TempDir()
	path := filepath.Join(h, ".gemini", "settings.json")
	_ = os.MkdirAll(filepath.Dir(path), 0o755)
	bad := "{\n  \"hooks\": {,\n}\n"
	_ = os.WriteFile(path, []byte(bad), 0o644)
	_, err := Gemini(Options{Scope: ScopeUser, Home: h})
	if err == nil || !strings.Contains(err.Error(), "not valid JSON, left untouched") {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != bad {
		t.Fatal("the unparseable file changed")
	}
	// A file that does not exist is created, and uninstall removes it.
	h = t.TempDir()
	cs, err := Gemini(Options{Scope: ScopeUser, Home: h, Command: "ctxfold"})
	if err != nil || cs[0].Action != "create" || Apply(cs) != nil {
		t.Fatalf("create: %v %v", err, cs)
	}
	cs, _ = Gemini(Options{Scope: ScopeUser, Home: h, Command: "ctxfold", Uninstall: true})
	if cs[0].Action != "remove" || Apply(cs) != nil {
		t.Fatalf("uninstall of a created file: %s", cs[0].Action)
	}
	if _, err := os.Stat(filepath.Join(h, ".gemini", "settings.json")); !os.IsNotExist(err) {
		t.Fatal("the settings file setup created is still there")
	}
}
