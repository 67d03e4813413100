package live

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestTailStateNeverBlocks: a tail.json that is a FIFO or a link to an
// endless device costs one open, as every cache file read does
// (docs/LIVE.md, "Hostile files"): the tail is copied afresh.
func TestTailStateNeverBlocks(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(path string) error
	}{
		{"a FIFO", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
		{"a link to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			file, data, minBytes := tailFixture(t)
			cache := t.TempDir()
			openTail(t, file, cache, minBytes)
			state := filepath.Join(TailDir(cache, file), tailStateFile)
			if err := os.Remove(state); err != nil {
				t.Fatal(err)
			}
			if err := c.make(state); err != nil {
				t.Skip(err)
			}
			done := make(chan *TailEntry, 1)
			go func() {
				te, err := OpenTail(context.Background(), file, Options{CacheDir: cache}, minBytes)
				if err != nil {
					t.Error(err)
					done <- nil
					return
				}
				te.Close()
				done <- te
			}()
			select {
			case te := <-done:
				if te != nil && (te.TailUpdate != Fresh || !copyIs(t, cache, file, data[te.Start:])) {
					t.Errorf("%+v: want a fresh, true copy", te)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("OpenTail blocked on a hostile tail.json")
			}
		})
	}
}

// TestTailCopyIsChecked: a copy that is not the file's bytes any more —
// a fresh copy cut short by a crash or a kill (the status line's command
// is killed when the client moves on), or a copy edited — is never
// extended as though it were: the tail is copied afresh.
func TestTailCopyIsChecked(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(copied, data []byte, start int64) []byte
	}{
		// A longer tail was being copied from an earlier line start when
		// the process died: tail.json still describes the shorter one.
		{"an interrupted fresh copy", func(copied, data []byte, start int64) []byte {
			from := bytes.LastIndexByte(data[:start-1], '\n') + 1
			return data[from : int(from)+len(copied)]
		}},
		{"a byte of the copy changed", func(copied, _ []byte, _ int64) []byte {
			b := clone(copied)
			b[len(b)/2] ^= 1
			return b
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			file, data, minBytes := tailFixture(t)
			cache := t.TempDir()
			te := openTail(t, file, cache, minBytes)
			cp := filepath.Join(TailDir(cache, file), tailCopyFile)
			copied, err := os.ReadFile(cp)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(cp, c.edit(copied, data, te.Start), 0o600); err != nil {
				t.Fatal(err)
			}
			more := []byte(`{"type":"file-history-snapshot","messageId":"z","snapshot":{},"isSnapshotUpdate":false}` + "\n")
			appendTo(t, file, more)
			te = openTail(t, file, cache, minBytes)
			grown := append(clone(data), more...)
			if !copyIs(t, cache, file, grown[te.Start:]) {
				t.Fatalf("%s: the copy is not the file's tail after the next open (%s)", c.name, te.TailUpdate)
			}
		})
	}
}

func copyIs(t *testing.T, cache, file string, want []byte) bool {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(TailDir(cache, file), tailCopyFile))
	return err == nil && bytes.Equal(got, want)
}

// TestTailDirNotADirectory: a tail directory that is a symlink (to a
// directory) or a file is replaced — nothing is written where the link
// points — and the tail is copied afresh.
func TestTailDirNotADirectory(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(dir, elsewhere string) error
	}{
		{"a symlink", func(dir, elsewhere string) error { return os.Symlink(elsewhere, dir) }},
		{"a file", func(dir, _ string) error { return os.WriteFile(dir, []byte("x"), 0o600) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			file, data, minBytes := tailFixture(t)
			cache := t.TempDir()
			openTail(t, file, cache, minBytes)
			dir := TailDir(cache, file)
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			elsewhere := t.TempDir()
			keep := filepath.Join(elsewhere, "keep")
			if err := os.WriteFile(keep, []byte("keep"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := c.make(dir, elsewhere); err != nil {
				t.Fatal(err)
			}
			te := openTail(t, file, cache, minBytes)
			if te.TailUpdate != Fresh || !copyIs(t, cache, file, data[te.Start:]) {
				t.Errorf("%+v: want a fresh, true copy", te)
			}
			if ents, _ := os.ReadDir(elsewhere); len(ents) != 1 {
				t.Errorf("written or removed through the symlink: %v", ents)
			}
			if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
				t.Errorf("the tail directory is not a directory again (%v)", err)
			}
		})
	}
}

// TestTailKeptAsLongAsAsked: estimate.FromTail asks for 1 MiB first on
// every call, then four times as much while the tail holds too few
// requests. A tail that had to be long is kept as it grows, not copied
// afresh — and grown again, copy after copy — on the next call's first,
// shorter ask; only a tail grown past 8 × the length it was copied with is.
func TestTailKeptAsLongAsAsked(t *testing.T) {
	defer func(r int64) { tailRebase = r }(tailRebase)
	tailRebase = 0
	file, _, minBytes := tailFixture(t)
	cache := t.TempDir()
	long := openTail(t, file, cache, minBytes)
	more := []byte(`{"type":"file-history-snapshot","messageId":"w","snapshot":{},"isSnapshotUpdate":false}` + "\n")
	appendTo(t, file, more)
	if te := openTail(t, file, cache, minBytes/16); te.TailUpdate != Appended || te.Start != long.Start {
		t.Fatalf("a shorter ask after an append: %s from %d; want the long tail (from %d) appended to", te.TailUpdate, te.Start, long.Start)
	}
	for range 8 {
		appendTo(t, file, bytes.Repeat(more, int(minBytes)/len(more)+1))
	}
	if te := openTail(t, file, cache, minBytes/16); te.TailUpdate != Fresh || te.Start <= long.Start {
		t.Errorf("a tail grown past 8 × the length it was copied with: %+v; want a fresh, shorter one", te)
	}
}

// TestTailLongLineKept: a tail that is longer than asked because its
// first line is (a pasted image, a huge tool result) is not copied afresh
// on every call, changed or not.
func TestTailLongLineKept(t *testing.T) {
	defer func(r int64) { tailRebase = r }(tailRebase)
	tailRebase = 0
	file, _, _ := tailFixture(t)
	big := `{"type":"file-history-snapshot","messageId":"v","snapshot":{"pad":"` + string(bytes.Repeat([]byte("x"), 64<<10)) + `"},"isSnapshotUpdate":false}` + "\n"
	appendTo(t, file, []byte(big))
	cache := t.TempDir()
	first := openTail(t, file, cache, 1<<10)
	if first.Size-first.Start < int64(len(big)) {
		t.Fatalf("%+v: want the tail to hold the long last line", first)
	}
	for range 2 {
		if te := openTail(t, file, cache, 1<<10); te.TailUpdate != Unchanged || te.Start != first.Start {
			t.Fatalf("an unchanged file whose last line is long: %s from %d; want unchanged from %d", te.TailUpdate, te.Start, first.Start)
		}
	}
}
