package cmd

import (
	"encoding/json"
	"fmt"
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

// Issue 44 #3: the dry run's diff shows the change with three lines of
// context, not the whole file (a real ~/.claude.json is thousands of
// lines).
func TestSetupDryRunDiffIsTheChange(t *testing.T) {
	h := t.TempDir()
	var b strings.Builder
	b.WriteString("{\n  \"projects\": {\n")
	for i := range 2000 {
		fmt.Fprintf(&b, "    \"/src/p%d\": {\n      \"history\": []\n    },\n", i)
	}
	b.WriteString("    \"/src/last\": {}\n  }\n}\n")
	_ = os.WriteFile(filepath.Join(h, ".claude.json"), []byte(b.String()), 0o600)
	r := runEnv(t, cliEnv{Env: map[string]string{"HOME": h}}, "setup", "claude-code", "--dry-run", "--command", "ctxfold")
	if r.Code != 0 {
		t.Fatalf("%+v", r)
	}
	_, claudeJSON, _ := strings.Cut(r.Stdout, ".claude.json: would update")
	if n := strings.Count(claudeJSON, "\n"); n > 30 || !strings.Contains(claudeJSON, "@@ ") || !strings.Contains(claudeJSON, `+  "mcpServers": {`) {
		t.Fatalf("%d lines of diff for a 9-line change:\n%s", n, claudeJSON)
	}
}

// Issue 44 #13: --project writes files people commit: the command is
// ctxfold when this program is the ctxfold on PATH, else setup says that
// the path is this machine's.
func TestSetupProjectCommandResolvesElsewhere(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "bin")
	_ = os.MkdirAll(bin, 0o755)
	exe := filepath.Join(bin, "ctxfold")
	_ = os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755)
	old := executable
	executable = func() (string, error) { return exe, nil }
	t.Cleanup(func() { executable = old })
	for _, onPath := range []bool{true, false} {
		p := t.TempDir()
		env := map[string]string{"HOME": t.TempDir(), "PATH": "/nonexistent"}
		if onPath {
			env["PATH"] = "/nonexistent" + string(filepath.ListSeparator) + bin
		}
		r := runEnv(t, cliEnv{Env: env}, "setup", "claude-code", "--project", "--dir", p)
		if r.Code != 0 {
			t.Fatalf("%+v", r)
		}
		b, _ := os.ReadFile(filepath.Join(p, ".claude", "settings.json"))
		if onPath && (!strings.Contains(string(b), `"command": "ctxfold hook `) || r.Stderr != "") {
			t.Fatalf("ctxfold on PATH: stderr %q\n%s", r.Stderr, b)
		}
		if !onPath && (!strings.Contains(string(b), exe+" hook ") || !strings.Contains(r.Stderr, "a path of this machine")) {
			t.Fatalf("not on PATH: stderr %q\n%s", r.Stderr, b)
		}
	}
}
