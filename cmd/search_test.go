package cmd

import (
	"strings"
	"testing"
)

func TestSearchCommandOutput(t *testing.T) {
	const dir = "../fixtures/compacted"
	// Piped: one tab-separated line per hit, nothing on stderr.
	r := cliRun(t, nil, false, "search", dir, "pandas")
	want := "sys\tsystem\tvisible\t\ta8*,a4x\t…engineering assistant. Prefer SQL over pandas.\n" +
		"u2x\tuser\toff-branch\t\ta4x\tActually, use pandas for the copy instead.\n"
	if r.Code != 0 || r.Stdout != want || r.Stderr != "" {
		t.Fatalf("exit %d\nstdout %q\nwant   %q\nstderr %q", r.Code, r.Stdout, want, r.Stderr)
	}
	// A terminal: two lines per hit and a count on stderr.
	r = cliRun(t, nil, true, "search", dir, "row count", "--color", "never")
	if want := "u2 · user · covered by summary_second · tips a8*\n    Now copy the data and check the row count.\n"; r.Stdout != want {
		t.Fatalf("tty stdout %q, want %q", r.Stdout, want)
	}
	if r.Stderr != "1 hit: 0 visible, 1 covered, 0 off-branch, 0 relic\n" {
		t.Fatalf("tty stderr %q", r.Stderr)
	}
	// JSON: one object with every hit and the counts.
	r = cliRun(t, nil, false, "search", dir, "--json", "--head", "a4x", "never drop")
	js := decodeJSON(t, r.Stdout)
	hits := js["hits"].([]any)
	if js["head"] != "a4x" || len(hits) != 3 || js["total"].(float64) != 3 {
		t.Fatalf("json: %s", r.Stdout)
	}
	first := hits[0].(map[string]any)
	if first["id"] != "u1" || first["status"] != "visible" || first["covered_by"] != "" || first["line"].(float64) != 2 {
		t.Fatalf("first hit: %v", first)
	}
}

func TestSearchCommandExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"search", "../fixtures/compacted", "no such words anywhere"}, ExitOK, ""},
		{[]string{"search", "../fixtures/compacted"}, ExitUsage, "takes 2 argument(s)"},
		{[]string{"search", "../fixtures/compacted", ""}, ExitUsage, "QUERY is empty"},
		{[]string{"search", "../fixtures/compacted", "--regexp", "a("}, ExitUsage, "error parsing regexp"},
		{[]string{"search", "../fixtures/compacted", "x", "--head", "summary_second"}, ExitUsage, "is a summary node"},
		{[]string{"search", "../fixtures/nonexistent", "x"}, ExitUsage, "nonexistent"},
	} {
		r := cliRun(t, nil, false, tc.args...)
		if r.Code != tc.code || !strings.Contains(r.Stderr, tc.stderr) {
			t.Errorf("%v: exit %d stderr %q; want %d and %q", tc.args, r.Code, r.Stderr, tc.code, tc.stderr)
		}
	}
	// No match on a terminal says so, on stderr only.
	if r := cliRun(t, nil, true, "search", "../fixtures/compacted", "zzz"); r.Stdout != "" || r.Stderr != "no matches\n" {
		t.Errorf("no match on a tty: %q %q", r.Stdout, r.Stderr)
	}
}
