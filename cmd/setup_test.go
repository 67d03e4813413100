package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSetupDryRunJSONAndErrors(t *testing.T) {
	h := t.TempDir()
	settings := filepath.Join(h, ".claude", "settings.json")
	_ = os.MkdirAll(filepath.Dir(settings), 0o755)
	orig := "{\n  \"model\": \"opus\"\n}\n"
	_ = os.WriteFile(settings, []byte(orig), 0o644)
	env := map[string]string{"HOME": h}
	r := runEnv(t, cliEnv{Env: env}, "setup", "claude-code", "--dry-run", "--command", "ctxfold")
	if r.Code != 0 || !strings.Contains(r.Stdout, "would update") || !strings.Contains(r.Stdout, `+  "hooks": {`) {
		t.Fatalf("%+v", r)
	}
	if b, _ := os.ReadFile(settings); string(b) != orig {
		t.Fatal("--dry-run wrote")
	}
	if _, err := os.Stat(filepath.Join(h, ".claude.json")); err == nil {
		t.Fatal("--dry-run created .claude.json")
	}
	r = runEnv(t, cliEnv{Env: env}, "setup", "claude-code", "--command", "ctxfold", "--json")
	var out struct {
		Changes []struct {
			Path, Action string
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil || len(out.Changes) != 2 || out.Changes[0].Action != "update" || out.Changes[1].Action != "create" {
		t.Fatalf("%s %v", r.Stdout, err)
	}
	_ = os.WriteFile(settings, []byte("{\"a\":"), 0o644)
	r = runEnv(t, cliEnv{Env: env}, "setup", "claude-code")
	if r.Code != ExitUsage || !strings.Contains(r.Stderr, "settings.json: not valid JSON, left untouched: line 1") {
		t.Fatalf("%+v", r)
	}
	if r := runEnv(t, cliEnv{Env: env}, "setup", "vim"); r.Code != ExitUsage {
		t.Fatalf("unknown client: %+v", r)
	}
}

func TestSetupGemini(t *testing.T) {
	h := t.TempDir()
	env := map[string]string{"HOME": h}
	r := runEnv(t, cliEnv{Env: env}, "setup", "gemini", "--command", "/opt/ctxfold", "--json")
	var out struct {
		Client  string
		Changes []struct{ Path, Action string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil || r.Code != 0 || len(out.Changes) != 1 ||
		out.Changes[0].Path != filepath.Join(h, ".gemini", "settings.json") || out.Changes[0].Action != "create" {
		t.Fatalf("%+v %v", r, err)
	}
	b, _ := os.ReadFile(filepath.Join(h, ".gemini", "settings.json"))
	if !strings.Contains(string(b), `"BeforeAgent"`) || !strings.Contains(string(b), `"/opt/ctxfold hook --client Gemini --by-setup"`) || !strings.Contains(string(b), `"CTXFOLD_CLIENT": "gemini"`) {
		t.Fatalf("settings.json:\n%s", b)
	}
}
