package store

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	read := func(p string) string {
		t.Helper()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, sync := range []bool{false, true} {
		if err := WriteBytesAtomic(p, AtomicOptions{Sync: sync}, []byte("one")); err != nil || read(p) != "one" {
			t.Fatalf("sync %v: %v", sync, err)
		}
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	// fn fails: the old file stays and no temporary file is left.
	boom := errors.New("boom")
	err := WriteFileAtomic(p, AtomicOptions{Sync: true}, func(w io.Writer) error {
		io.WriteString(w, "partial")
		return boom
	})
	if err != boom || read(p) != "one" {
		t.Fatalf("failed fn: err %v, file %q", err, read(p))
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".f.tmp-*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
	// NoClobber refuses a taken name, a symlink included, with fs.ErrExist.
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("target"), 0o644)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Skip(err)
	}
	for _, name := range []string{p, link} {
		if err := WriteBytesAtomic(name, AtomicOptions{NoClobber: true}, []byte("two")); !errors.Is(err, fs.ErrExist) {
			t.Errorf("NoClobber over %s: %v", name, err)
		}
	}
	if read(p) != "one" || read(target) != "target" {
		t.Fatal("a refused write changed a file")
	}
	// Replacing a symlink replaces the link, never what it points to.
	if err := WriteBytesAtomic(link, AtomicOptions{Perm: 0o600}, []byte("three")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(link); st.Mode()&fs.ModeSymlink != 0 || st.Mode().Perm() != 0o600 || read(link) != "three" || read(target) != "target" {
		t.Fatalf("link %v %q, target %q", st.Mode(), read(link), read(target))
	}
	if err := WriteBytesAtomic(filepath.Join(dir, "new"), AtomicOptions{NoClobber: true, Sync: true}, []byte("n")); err != nil || read(filepath.Join(dir, "new")) != "n" {
		t.Fatalf("NoClobber on a free name: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
	// A failure names the file, not the temporary one.
	if err := WriteBytesAtomic(filepath.Join(dir, "missing", "f"), AtomicOptions{}, nil); err == nil || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing dir: %v", err)
	}
}
