package main

import (
	"os"
	"path/filepath"
	"testing"
)

// Issue 44 item 12: without -src the command replicates a session that
// exists in any clone, and writes a file of the size asked.
func TestDefaultSourceExists(t *testing.T) {
	src := defaultSource()
	if _, err := os.Stat(src); err != nil {
		t.Fatalf("default -src %s: %v", src, err)
	}
	out := filepath.Join(t.TempDir(), "s.jsonl")
	if err := run(src, out, 1, 0, 0); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(out); err != nil || st.Size() < 1_000_000 {
		t.Fatalf("wrote %v %v", st, err)
	}
}
