package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const brokenDir = "../fixtures/broken/"

// unreadableSession writes a session whose second line is not JSON.
func unreadableSession(t *testing.T) string {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "session.json"), []byte(`{"format_version":1,"head":"a"}`), 0o644)
	os.WriteFile(filepath.Join(dir, "nodes.jsonl"), []byte("{\"id\":\"a\",\"role\":\"user\"}\nnot json\n"), 0o644)
	return dir
}

func TestVerifyExitCodes(t *testing.T) {
	bad := unreadableSession(t)
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"clean", []string{"../fixtures/compacted"}, 0},
		{"several clean", []string{"../fixtures/tools", "../fixtures/fork", "../fixtures/compacted"}, 0},
		{"violation", []string{brokenDir + "cycle"}, 1},
		{"violation json", []string{"--json", brokenDir + "cycle"}, 1},
		{"warning only", []string{brokenDir + "tool_call_pending"}, 0},
		{"warning strict", []string{"--strict", brokenDir + "tool_call_pending"}, 1},
		{"clean then broken", []string{"../fixtures/tools", brokenDir + "covers_dead_fork"}, 1},
		{"unreadable", []string{bad}, 2},
		{"unreadable json", []string{"--json", bad}, 2},
		{"broken and unreadable", []string{brokenDir + "cycle", bad}, 2},
		{"no such dir", []string{filepath.Join(t.TempDir(), "nope")}, 2},
		{"no args", nil, 2},
	} {
		r := cliRun(t, nil, false, append([]string{"verify"}, tc.args...)...)
		if r.Code != tc.code {
			t.Errorf("%s: exit %d, want %d\nstdout %s\nstderr %s", tc.name, r.Code, tc.code, r.Stdout, r.Stderr)
		}
	}
}

func TestVerifyTextOutput(t *testing.T) {
	r := cliRun(t, nil, false, "verify", "../fixtures/compacted", brokenDir+"splice_mismatch", brokenDir+"tool_call_pending")
	want := `../fixtures/compacted: ok (21 nodes, 2 branch tips, 2 summaries)
../fixtures/broken/splice_mismatch: 2 errors (10 nodes, 1 branch tip, 1 summary)
  summaries
    error splice_mismatch: ../fixtures/broken/splice_mismatch/nodes.jsonl:10: node "summary_1": predecessor is "sys" but the first covered node "a1" follows "u1": a summary sits at its segment's splice point
  rendering
    error render_not_substituted: ../fixtures/broken/splice_mismatch/nodes.jsonl:10: node "summary_1": 1 branch tip(s) whose spine holds the whole covered segment render raw (first: "a4"): the active summary never reaches the prompt
../fixtures/broken/tool_call_pending: ok, 1 warning (10 nodes, 1 branch tip, 0 summaries)
  tools
    warning tool_call_pending: ../fixtures/broken/tool_call_pending/nodes.jsonl:10: node "a5": the view from here ends with 1 tool call(s) awaiting a result (first "c5"): the next request needs them answered
`
	if r.Code != 1 || r.Stdout != want || r.Stderr != "" {
		t.Fatalf("exit %d\nstdout:\n%s\nwant:\n%s\nstderr %q", r.Code, r.Stdout, want, r.Stderr)
	}
	// A terminal gets colour; --color never turns it off again.
	r = cliRun(t, nil, true, "verify", brokenDir+"cycle")
	if !strings.Contains(r.Stdout, "\x1b[31merror\x1b[0m cycle:") {
		t.Fatalf("tty output has no colour: %q", r.Stdout)
	}
	r = cliRun(t, nil, true, "verify", "--color", "never", brokenDir+"cycle")
	if strings.Contains(r.Stdout, "\x1b[") {
		t.Fatalf("--color never output has colour: %q", r.Stdout)
	}
}

func TestVerifyUnreadable(t *testing.T) {
	bad := unreadableSession(t)
	r := cliRun(t, nil, false, "verify", "../fixtures/tools", bad)
	wantErr := "ctxfold: error: " + filepath.Join(bad, "nodes.jsonl") + ":2: expected a JSON object: invalid character 'o' in literal null (expecting 'u') at byte 2\n"
	if r.Code != 2 || r.Stderr != wantErr {
		t.Fatalf("exit %d stderr %q\nwant %q", r.Code, r.Stderr, wantErr)
	}
	if want := "../fixtures/tools: ok (16 nodes, 1 branch tip, 0 summaries)\n" + bad + ": cannot be read\n"; r.Stdout != want {
		t.Fatalf("stdout %q, want %q", r.Stdout, want)
	}
}

func TestVerifyJSON(t *testing.T) {
	bad := unreadableSession(t)
	dirs := []string{brokenDir + "several-structure-and-tools", "../fixtures/fork", bad, brokenDir + "interrupted_write"}
	r := cliRun(t, nil, false, append([]string{"verify", "--json", "--strict"}, dirs...)...)
	lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
	if r.Code != 2 || len(lines) != len(dirs) {
		t.Fatalf("exit %d, %d lines:\n%s", r.Code, len(lines), r.Stdout)
	}
	for i, line := range lines {
		js := decodeJSON(t, line)
		if js["session"] != dirs[i] || js["schema_version"].(float64) != 2 {
			t.Fatalf("line %d is not session %s: %s", i, dirs[i], line)
		}
	}
	first := decodeJSON(t, lines[0])
	errs := first["errors"].([]any)
	if first["ok"] != false || first["num_errors"].(float64) != 4 || len(errs) != 4 {
		t.Fatalf("first: %s", lines[0])
	}
	e := errs[0].(map[string]any)
	if e["code"] != "duplicate_id" || e["node_id"] != "a2" || e["line"].(float64) != 10 || !strings.HasSuffix(e["file"].(string), "nodes.jsonl") ||
		e["message"] != "duplicate id (first defined on line 5)" {
		t.Fatalf("first error: %v", e)
	}
	if fork := decodeJSON(t, lines[1]); fork["ok"] != true || fork["num_errors"].(float64) != 0 || len(fork["warnings"].([]any)) != 0 {
		t.Fatalf("fork: %s", lines[1])
	}
	if unread := decodeJSON(t, lines[2]); unread["ok"] != false || !strings.Contains(unread["read_error"].(string), "nodes.jsonl:2") {
		t.Fatalf("unreadable: %s", lines[2])
	}
	// --strict: the interrupted write is an error, not a warning.
	last := decodeJSON(t, lines[3])
	if last["ok"] != false || last["num_errors"].(float64) != 1 || last["num_warnings"].(float64) != 0 ||
		last["errors"].([]any)[0].(map[string]any)["code"] != "interrupted_write" {
		t.Fatalf("strict: %s", lines[3])
	}
}

// An events.jsonl that cannot be read at all (here a directory) makes the
// session unreadable (exit 2), unlike a malformed event line (a finding,
// exit 1).
func TestVerifyUnreadableEvents(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"session.json", "nodes.jsonl"} {
		data, err := os.ReadFile(filepath.Join("../fixtures/tools", name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	if err := os.Mkdir(filepath.Join(dir, "events.jsonl"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := cliRun(t, nil, false, "verify", dir)
	if r.Code != 2 || !strings.Contains(r.Stderr, "events.jsonl") || !strings.Contains(r.Stdout, "cannot be read") {
		t.Fatalf("unreadable events: exit %d\nstdout %s\nstderr %s", r.Code, r.Stdout, r.Stderr)
	}
	os.Remove(filepath.Join(dir, "events.jsonl"))
	os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte("not an event\n"), 0o644)
	r = cliRun(t, nil, false, "verify", dir)
	if r.Code != 1 || !strings.Contains(r.Stdout, "event_malformed") {
		t.Fatalf("malformed event: exit %d\nstdout %s\nstderr %s", r.Code, r.Stdout, r.Stderr)
	}
}
