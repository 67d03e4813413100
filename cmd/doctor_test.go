package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// doctorHome is a HOME with Claude Code set up by setup, running a
// ctxfold that answers `version` (a script standing in for the binary).
func doctorHome(t *testing.T) (env map[string]string, bin string) {
	t.Helper()
	home, tools := t.TempDir(), t.TempDir()
	bin = filepath.Join(tools, "ctxfold")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n[ \"$1\" = version ] && echo 'ctxfold v9' && exit 0\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env = map[string]string{"HOME": home, "PATH": tools + ":/usr/bin:/bin", "XDG_CACHE_HOME": filepath.Join(home, "cache")}
	if r := cliRun(t, env, false, "setup", "claude-code", "--command", bin); r.Code != 0 {
		t.Fatalf("setup: exit %d: %s", r.Code, r.Stderr)
	}
	return env, bin
}

func doctorLines(t *testing.T, out string) map[string]doctorReport {
	t.Helper()
	got := map[string]doctorReport{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r doctorReport
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		got[r.Client] = r
	}
	return got
}

func TestDoctorHealthySetup(t *testing.T) {
	env, bin := doctorHome(t)
	r := cliRun(t, env, false, "doctor", "--json")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s%s", r.Code, r.Stdout, r.Stderr)
	}
	got := doctorLines(t, r.Stdout)
	cc := got["claude-code"]
	if !cc.Installed || cc.Setup != "complete" || len(cc.Problems) != 0 || len(cc.Entries) < 6 {
		t.Fatalf("claude-code: %+v", cc)
	}
	for _, e := range cc.Entries {
		if !e.Runs || e.Argv[0] != bin {
			t.Errorf("%s %s: runs %v, argv %q", e.Kind, e.Event, e.Runs, e.Argv)
		}
	}
	if g := got["gemini"]; g.Installed || g.Setup != "none" || len(g.Problems) != 0 {
		t.Errorf("gemini, not installed, is not a problem: %+v", g)
	}
}

func TestDoctorReportsAHookThatCannotRun(t *testing.T) {
	env, bin := doctorHome(t)
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	r := cliRun(t, env, false, "doctor", "--json")
	if r.Code != 1 {
		t.Fatalf("exit %d, want 1: %s", r.Code, r.Stdout)
	}
	cc := doctorLines(t, r.Stdout)["claude-code"]
	if len(cc.Problems) == 0 || !strings.Contains(cc.Problems[0].Problem, "cannot run") || !strings.Contains(cc.Problems[0].Hint, "ctxfold setup claude-code") {
		t.Errorf("problems: %+v", cc.Problems)
	}
	text := cliRun(t, env, false, "doctor")
	if text.Code != 1 || !strings.Contains(text.Stdout, "problem: the hook") || !strings.Contains(text.Stdout, "hint: run 'ctxfold setup claude-code' again") {
		t.Errorf("text: exit %d\n%s", text.Code, text.Stdout)
	}
}

func TestDoctorReportsAPartialSetup(t *testing.T) {
	env, _ := doctorHome(t)
	settings := filepath.Join(env["HOME"], ".claude", "settings.json")
	b, _ := os.ReadFile(settings)
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc["hooks"].(map[string]any), "UserPromptSubmit")
	b, _ = json.Marshal(doc)
	_ = os.WriteFile(settings, b, 0o600)
	r := cliRun(t, env, false, "doctor", "--json")
	cc := doctorLines(t, r.Stdout)["claude-code"]
	if r.Code != 1 || cc.Setup != "partial" || len(cc.Missing) != 1 || cc.Missing[0] != "hook UserPromptSubmit" {
		t.Errorf("exit %d: %+v", r.Code, cc)
	}
}
