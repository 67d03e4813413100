package report_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/report"
)

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	if err := report.WriteFileAtomic(path, func(w io.Writer) error {
		_, err := io.WriteString(w, "first")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if raw, _ := os.ReadFile(path); string(raw) != "first" {
		t.Fatalf("content %q", raw)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	// A failure after bytes went out: fn's error as it is, the existing
	// file untouched, no temporary file left behind.
	boom := errors.New("boom")
	err := report.WriteFileAtomic(path, func(w io.Writer) error {
		io.WriteString(w, "partial")
		return boom
	})
	if err != boom {
		t.Fatalf("err = %v, want fn's error", err)
	}
	if raw, _ := os.ReadFile(path); string(raw) != "first" {
		t.Errorf("a failed write changed the file: %q", raw)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("leftover files: %v", names)
	}
	// A directory that does not exist: the error names the path asked
	// for, not a temporary file, and fn never runs.
	missing := filepath.Join(dir, "no", "such", "out.json")
	ran := false
	err = report.WriteFileAtomic(missing, func(io.Writer) error { ran = true; return nil })
	if err == nil || ran || !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), missing+": ") || strings.Contains(err.Error(), ".tmp-") {
		t.Errorf("missing dir: err %v, fn ran %v", err, ran)
	}
}
