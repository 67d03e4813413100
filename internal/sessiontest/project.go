package sessiontest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ProjectFolder lays out, in a new temporary folder, a project as a
// client keeps it: the Claude Code recording at recording (whose first
// request is recorded) as an earlier session, an hour old, and a fresh
// session — the recording's lines before its first reply, under another
// session id — beside it (docs/ACCURACY.md, "The project's own sessions").
func ProjectFolder(t testing.TB, recording string) (dir, earlier, fresh string) {
	t.Helper()
	b, err := os.ReadFile(recording)
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	earlier = filepath.Join(dir, filepath.Base(recording))
	fresh = filepath.Join(dir, "00000000-0000-4000-8000-0000000000f1.jsonl")
	head := HeadBefore(string(b), `"type":"assistant"`)
	if head == string(b) {
		t.Fatalf("%s: no reply", recording)
	}
	id := strings.TrimSuffix(filepath.Base(recording), ".jsonl")
	WriteAged(t, earlier, string(b), -time.Hour)
	WriteAged(t, fresh, strings.ReplaceAll(head, id, "00000000-0000-4000-8000-0000000000f1"), 0)
	return dir, earlier, fresh
}

// HeadBefore is content's lines before the first that holds marker (all
// of it without one): a transcript cut before its first reply.
func HeadBefore(content, marker string) string {
	lines := strings.SplitAfter(content, "\n")
	first := 0
	for first < len(lines) && !strings.Contains(lines[first], marker) {
		first++
	}
	return strings.Join(lines[:first], "")
}

// WriteAged writes content to path with its modification time age from
// now (the newest-first order of a folder's sessions).
func WriteAged(t testing.TB, path, content string, age time.Duration) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(age)
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}
