package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The read-only commands take a transcript file; --json names the file and
// its cache session; writing commands refuse it and say why.
func TestLiveFileArguments(t *testing.T) {
	src := claudeInteropTranscripts(t)["compact"]
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	env := cliEnv{Env: map[string]string{"XDG_CACHE_HOME": t.TempDir()}}
	r := runEnv(t, env, "estimate", file, "--json")
	var res struct {
		Session, File string
		Total         int
	}
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || r.Code != 0 {
		t.Fatalf("estimate FILE: exit %d %q %v", r.Code, r.Stdout+r.Stderr, err)
	}
	if res.File != file || !strings.HasPrefix(res.Session, env.Env["XDG_CACHE_HOME"]) || res.Total == 0 {
		t.Errorf("estimate FILE --json: %+v", res)
	}
	// The same figures as an explicit import.
	dir := filepath.Join(t.TempDir(), "s")
	if r := runEnv(t, env, "import", file, "-o", dir); r.Code != 0 {
		t.Fatalf("import: %+v", r)
	}
	var direct struct{ Total int }
	r = runEnv(t, env, "estimate", dir, "--json")
	if err := json.Unmarshal([]byte(r.Stdout), &direct); err != nil || direct.Total != res.Total {
		t.Errorf("estimate DIR total %d, estimate FILE %d (%v)", direct.Total, res.Total, err)
	}
	for _, args := range [][]string{
		{"verify", file}, {"render", file, "--format", "ids"}, {"graph", file},
		{"search", file, "the"}, {"audit", file}, {"compact", file, "--dry-run"},
		{"render", file, "--diff"}, {"render", file, "--fit", "--window", "1000000"},
	} {
		if r := runEnv(t, env, args...); r.Code != 0 {
			t.Errorf("%v: exit %d %s", args, r.Code, r.Stderr)
		}
		// --json names the file and its cache session.
		jargs := append(append([]string{}, args...), "--json")
		if args[0] == "graph" {
			jargs = append(args, "--format", "json")
		}
		r := runEnv(t, env, jargs...)
		out := r.Stdout
		var named struct{ Session, File string }
		if err := json.Unmarshal([]byte(out), &named); err != nil || r.Code != 0 {
			t.Errorf("%v: exit %d, not one JSON object: %v %q", jargs, r.Code, err, out)
			continue
		}
		if named.File != file || named.Session != res.Session {
			t.Errorf("%v --json names file %q session %q, want %q and %q", args, named.File, named.Session, file, res.Session)
		}
	}
	// A session directory argument has no "file".
	if r := runEnv(t, env, "verify", dir, "--json"); strings.Contains(r.Stdout, `"file"`) || r.Code != 0 {
		t.Errorf("verify DIR --json: exit %d %q", r.Code, r.Stdout)
	}
	if r := runEnv(t, env, "render", file, "--format", "ids"); !strings.Contains(r.Stdout, "\n") {
		t.Errorf("render FILE printed nothing: %q", r.Stdout)
	}
	for _, args := range [][]string{{"compact", file}, {"append", file, "--role", "user", "--content", "x"}, {"checkout", file, "x"}} {
		r := runEnv(t, env, args...)
		if r.Code != ExitUsage || !strings.Contains(r.Stderr, "session directory") {
			t.Errorf("%v: exit %d %q, want a refusal naming a session directory", args, r.Code, r.Stderr)
		}
	}
	after, _ := os.ReadFile(file)
	if string(after) != string(b) {
		t.Error("a command wrote to the transcript file")
	}
}

// Issue 44 item 5: the "not a transcript" hint says "name it with --from",
// so every command reading a transcript file takes --from; without it the
// file is refused with that hint.
func TestLiveFileFrom(t *testing.T) {
	file := filepath.Join(t.TempDir(), "chat.md")
	// An aider history without its "# aider chat started at" line: auto
	// detection declines it, --from aider reads it.
	if err := os.WriteFile(file, []byte("#### hello there\n\nHi! How can I help?\n\n#### list the files\n\nSure: main.go.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"estimate", file}, {"render", file}, {"graph", file}, {"verify", file},
		{"search", file, "files"}, {"compact", file, "--dry-run"}, {"audit", file},
	} {
		// A cache of its own: once read with --from, the cache session
		// keeps its format for later runs without it.
		env := cliEnv{Env: map[string]string{"XDG_CACHE_HOME": t.TempDir(), "CTXFOLD_MODEL": "gpt-4o"}}
		r := runEnv(t, env, args...)
		if r.Code != ExitUsage || !strings.Contains(r.Stderr, "name it with --from") {
			t.Fatalf("%v without --from: exit %d %s", args, r.Code, r.Stderr)
		}
		r = runEnv(t, env, append(args, "--from", "aider")...)
		// audit needs a summary to audit: its refusal says so, not the format.
		if args[0] == "audit" {
			if strings.Contains(r.Stderr, "--from") || !strings.Contains(r.Stderr, "summary") {
				t.Errorf("%v --from aider: exit %d %s", args, r.Code, r.Stderr)
			}
			continue
		}
		if r.Code != 0 {
			t.Errorf("%v --from aider: exit %d %s", args, r.Code, r.Stderr)
		}
	}
	env := cliEnv{Env: map[string]string{"XDG_CACHE_HOME": t.TempDir()}}
	if r := runEnv(t, env, "estimate", file, "--from", "bogus"); r.Code != ExitUsage || !strings.Contains(r.Stderr, "--from must be one of") {
		t.Errorf("--from bogus: exit %d %s", r.Code, r.Stderr)
	}
}
