package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A crafted node id cannot drive the terminal through search's text
// output, piped or on a TTY; --json keeps the exact id.
func TestSearchEscapesIDs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	if r := cliRun(t, nil, false, "init", dir); r.Code != 0 {
		t.Fatal(r.Stderr)
	}
	batch := filepath.Join(t.TempDir(), "b.jsonl")
	line := `{"id":"evil\u001b]0;pwned\u0007\u001b[31m","role":"user","content":"find the needle"}` + "\n"
	if err := os.WriteFile(batch, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := cliRun(t, nil, false, "append", dir, "--file", batch); r.Code != 0 {
		t.Fatal(r.Stderr)
	}
	for _, tty := range []bool{false, true} {
		r := cliRun(t, nil, tty, "search", dir, "needle", "--color", "never")
		if r.Code != 0 || !strings.Contains(r.Stdout, `evil\x1b]0;pwned\x07\x1b[31m`) || strings.ContainsRune(r.Stdout, 0x1b) {
			t.Fatalf("tty=%v: exit %d, stdout %q", tty, r.Code, r.Stdout)
		}
	}
	r := cliRun(t, nil, false, "search", dir, "needle", "--json")
	if !strings.Contains(r.Stdout, `evil\u001b]0;pwned\u0007\u001b[31m`) {
		t.Fatalf("--json must keep the exact id: %q", r.Stdout)
	}
}
