package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 44 item 13, the small frictions of cmd/.
func TestFrictionMessages(t *testing.T) {
	// A missing argument named like a file is a missing file, not a
	// missing session directory; one without an extension still is.
	missing := filepath.Join(t.TempDir(), "missing.jsonl")
	r := cliRun(t, nil, false, "estimate", missing)
	if r.Code != ExitUsage || r.Stderr != "ctxfold: error: "+missing+": no such file (a transcript file or a session directory was expected)\n" {
		t.Errorf("estimate missing.jsonl: %d %q", r.Code, r.Stderr)
	}
	if r := cliRun(t, nil, false, "render", strings.TrimSuffix(missing, ".jsonl")); !strings.Contains(r.Stderr, "no such session directory") {
		t.Errorf("render missing: %q", r.Stderr)
	}
	// A session that records no model, none configured: the hint names
	// model:, the setting, not the models: table.
	dir := filepath.Join(t.TempDir(), "s")
	cliRun(t, nil, false, "init", dir)
	cliRun(t, nil, false, "append", dir, "--role", "user", "--content", "hi")
	r = cliRun(t, nil, false, "estimate", dir)
	if r.Code != ExitUsage || !strings.Contains(r.Stderr, "ctxfold: hint: pass --model M (or --window N), or set model: in the config file") || strings.Contains(r.Stderr, "models:") {
		t.Errorf("no model: %d %q", r.Code, r.Stderr)
	}
	// Piped estimate of several files: stdout ends with the last file's
	// data; the summary line is on stderr.
	src, err := os.ReadFile(importFixtures + "claude-code/sess-0001.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	files := t.TempDir()
	for _, n := range []string{"a.jsonl", "b.jsonl"} {
		os.WriteFile(filepath.Join(files, n), src, 0o644)
	}
	env := cliEnv{Env: map[string]string{"XDG_CACHE_HOME": t.TempDir()}}
	r = runEnv(t, env, "estimate", files)
	lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
	if r.Code != 0 || !strings.Contains(lines[len(lines)-1], "\t") || !strings.HasPrefix(r.Stderr, "ctxfold: 2 transcripts: 2 measured") {
		t.Errorf("piped estimate DIR: exit %d, last line %q, stderr %q", r.Code, lines[len(lines)-1], r.Stderr)
	}
	// On a terminal the summary line ends the output.
	r = runEnv(t, cliEnv{TTY: true, Env: env.Env}, "estimate", files)
	if !strings.Contains(r.Stdout, "\n2 transcripts: 2 measured") {
		t.Errorf("tty estimate DIR: %q", r.Stdout)
	}
}
