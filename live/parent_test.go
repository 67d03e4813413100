package live

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Droid session a manual compaction started reads its parent's file
// (format/droid, the parent chain), which the import reports attached: a
// change in the parent alone refreshes the entry (grown or rewritten),
// and the cache session then holds
// what a fresh import holds. Recorded with Droid 0.215.0
// (testdata/interop/droid/…/compaction-manual).
func TestDroidParentChanges(t *testing.T) {
	src := "../testdata/interop/droid/0.215.0/compaction-manual"
	var child, parent string
	files, _ := filepath.Glob(filepath.Join(src, "*-*.jsonl"))
	dir := t.TempDir()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(dir, filepath.Base(f))
		if err := os.WriteFile(to, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(bytes.SplitN(data, []byte("\n"), 2)[0], []byte(`"parent":"`)) {
			child = to
		} else {
			parent = to
		}
	}
	if child == "" || parent == "" {
		t.Fatalf("no parent and child session in %s", src)
	}
	orig, _ := os.ReadFile(parent)
	extra := []byte(`{"type":"message","id":"late-1","parentId":"` + lastMessageID(t, orig) + `","timestamp":"2026-12-06T00:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"A late line in the parent."}]}}` + "\n")
	cache := t.TempDir()
	steps := []struct {
		name           string
		parent         []byte
		update, reason string
		late           bool
	}{
		{"first", orig, Fresh, "", false},
		{"unchanged", orig, Unchanged, "", false},
		// Grown: the new session's first message, which names no parent
		// message, now follows the late line: the stored node moved, so
		// the append becomes a fresh import (importInto).
		{"parent grown", append(append([]byte(nil), orig...), extra...), Fresh, "a stored node changed", true},
		{"parent rewritten", orig, Fresh, "rewritten", false},
	}
	for _, s := range steps {
		if err := os.WriteFile(parent, s.parent, 0o644); err != nil {
			t.Fatal(err)
		}
		e, err := openClosed(context.Background(), child, Options{CacheDir: cache})
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if e.Update != s.update || !strings.Contains(e.Reason, s.reason) {
			t.Fatalf("%s: update %q (%s), want %q", s.name, e.Update, e.Reason, s.update)
		}
		got := readNodes(t, e.Session)
		if bytes.Contains(got, []byte("A late line in the parent.")) != s.late {
			t.Errorf("%s: the parent's late line in the cache session: %v, want %v", s.name, !s.late, s.late)
		}
		if want := freshNodes(t, child); !bytes.Equal(got, want) && !sameLines(got, want) {
			t.Errorf("%s: the cache session differs from a fresh import", s.name)
		}
	}
}

// lastMessageID is the id of a Droid session's last message record.
func lastMessageID(t *testing.T, data []byte) string {
	t.Helper()
	id := ""
	for _, l := range bytes.Split(data, []byte("\n")) {
		if bytes.HasPrefix(l, []byte(`{"type":"message","id":"`)) {
			rest := l[len(`{"type":"message","id":"`):]
			id = string(rest[:bytes.IndexByte(rest, '"')])
		}
	}
	if id == "" {
		t.Fatal("no message in the parent")
	}
	return id
}
