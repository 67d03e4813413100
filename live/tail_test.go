package live

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// tailFixture is a real-client Claude Code transcript (the compaction
// recording) written to a temp file, and a tail length that starts inside
// it.
func tailFixture(t *testing.T) (file string, data []byte, minBytes int64) {
	t.Helper()
	src := filepath.Join("..", "testdata", "interop", "claude-code", "2.1.328", "compact", "transcript", "00000000-0000-4000-8000-000000000001.jsonl")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return file, data, int64(len(data)) / 2
}

func openTail(t *testing.T, file, cache string, minBytes int64) *TailEntry {
	t.Helper()
	te, err := OpenTail(context.Background(), file, Options{CacheDir: cache}, minBytes)
	if err != nil {
		t.Fatal(err)
	}
	te.Close()
	return te
}

// TestTailFollowsTheFile: a tail is copied from a line start, kept while
// the file only grows (appended to, never copied again), and copied
// afresh when a byte of it or just before it changed, when the file got
// shorter or was replaced, or when a longer tail is asked for.
func TestTailFollowsTheFile(t *testing.T) {
	file, data, minBytes := tailFixture(t)
	cache := t.TempDir()
	te := openTail(t, file, cache, minBytes)
	if te.TailUpdate != Fresh || te.Start <= 0 || data[te.Start-1] != '\n' || te.Size != int64(len(data)) {
		t.Fatalf("first open: %+v; want a fresh tail from a line start inside the file", te)
	}
	copied, err := os.ReadFile(filepath.Join(TailDir(cache, file), tailCopyFile))
	if err != nil || !bytes.Equal(copied, data[te.Start:]) {
		t.Fatalf("the copy is not the file's tail (%v)", err)
	}
	start := te.Start
	if te := openTail(t, file, cache, minBytes); te.TailUpdate != Unchanged || te.Start != start {
		t.Fatalf("unchanged file: %+v", te)
	}
	more := []byte(`{"type":"file-history-snapshot","messageId":"x","snapshot":{},"isSnapshotUpdate":false}` + "\n")
	appendTo(t, file, more)
	if te := openTail(t, file, cache, minBytes); te.TailUpdate != Appended || te.Start != start || te.Size != int64(len(data)+len(more)) {
		t.Fatalf("grown file: %+v", te)
	}
	grown := append(append([]byte{}, data...), more...)
	for _, c := range []struct {
		name string
		edit func() []byte
	}{
		{"a byte of the tail changed", func() []byte { b := clone(grown); b[start+10] ^= 1; return b }},
		{"a byte just before the tail changed", func() []byte { b := clone(grown); b[start-20] ^= 1; return b }},
		{"the file got shorter", func() []byte { return clone(grown[:len(grown)-len(more)]) }},
	} {
		if err := os.WriteFile(file, c.edit(), 0o600); err != nil {
			t.Fatal(err)
		}
		if te := openTail(t, file, cache, minBytes); te.TailUpdate != Fresh {
			t.Errorf("%s: %s; want fresh", c.name, te.TailUpdate)
		}
		if err := os.WriteFile(file, grown, 0o600); err != nil {
			t.Fatal(err)
		}
		openTail(t, file, cache, minBytes)
	}
	// Replaced by another file with the same bytes: a new inode.
	tmp := file + ".new"
	if err := os.WriteFile(tmp, grown, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
	if te := openTail(t, file, cache, minBytes); te.TailUpdate != Fresh {
		t.Errorf("replaced file: %s; want fresh", te.TailUpdate)
	}
	if te := openTail(t, file, cache, 2*minBytes); te.TailUpdate != Fresh || te.Start >= start {
		t.Errorf("a longer tail asked for: %+v; want a fresh one starting earlier", te)
	}
	// A shorter tail asked for keeps the longer one; one grown past 8 ×
	// the length it was copied with is copied afresh (TestTailKeptAsLongAsAsked).
	te = openTail(t, file, cache, minBytes/8)
	if te.TailUpdate != Unchanged {
		t.Fatalf("a shorter tail asked for: %s; want the longer one kept", te.TailUpdate)
	}
}

// TestTailNeverFollowsASymlink: a copy replaced by a symlink is replaced,
// never written through.
func TestTailNeverFollowsASymlink(t *testing.T) {
	file, _, minBytes := tailFixture(t)
	cache := t.TempDir()
	openTail(t, file, cache, minBytes)
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(TailDir(cache, file), tailCopyFile)
	if err := os.Remove(cp); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, cp); err != nil {
		t.Fatal(err)
	}
	appendTo(t, file, []byte(`{"type":"file-history-snapshot","messageId":"y","snapshot":{},"isSnapshotUpdate":false}`+"\n"))
	openTail(t, file, cache, minBytes)
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Fatalf("the symlink's target was written: %q", b)
	}
	if st, err := os.Lstat(cp); err != nil || !st.Mode().IsRegular() {
		t.Fatalf("the copy is not a regular file again (%v)", err)
	}
}

// TestTailOnlyClaudeCode: other formats have no tail session.
func TestTailOnlyClaudeCode(t *testing.T) {
	src := filepath.Join("..", "testdata", "interop", "codex", "0.169.0", "chat", "rollout-2026-01-01T00-00-00-00000000-0000-7000-8000-000000000001.jsonl")
	if _, err := OpenTail(context.Background(), src, Options{CacheDir: t.TempDir()}, 100); !errors.Is(err, ErrTailUnsupported) {
		t.Fatalf("a Codex rollout: %v; want ErrTailUnsupported", err)
	}
}

// TestCountInAcrossBuffers: a pattern split between two reads, or between
// the two halves counted at once, is counted once.
func TestCountInAcrossBuffers(t *testing.T) {
	const size = 10 << 20
	body := bytes.Repeat([]byte("x"), size)
	at := []int{4<<20 - 10, 4<<20 + 18, size/2 - 10, size - len(compactBoundary)}
	for _, p := range at {
		copy(body[p:], compactBoundary)
	}
	f := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(f, body, 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if n, err := countIn(in, 0, size, compactBoundary); err != nil || n != len(at) {
		t.Fatalf("countIn = %d, %v; want %d", n, err, len(at))
	}
	if n, _ := countIn(in, 0, size-1, compactBoundary); n != len(at)-1 {
		t.Fatalf("a pattern cut by the range's end: countIn = %d; want %d", n, len(at)-1)
	}
}

func appendTo(t *testing.T, file string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

func clone(b []byte) []byte { return append([]byte{}, b...) }
