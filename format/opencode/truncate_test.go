package opencode_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/format/opencode"
	"github.com/ctxfold/ctxfold/internal/importtest"
	"github.com/ctxfold/ctxfold/transcript"
)

// A database cut short (a copy taken mid-write) or with a damaged page is
// a parse error naming the file, never a panic.
func TestDamagedDB(t *testing.T) {
	data, err := os.ReadFile(dir + "opencode.db")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "opencode.db")
	for cut := 0; cut < len(data); cut += 4096 {
		for _, damaged := range [][]byte{data[:cut], append(append([]byte(nil), data[:cut]...), make([]byte, len(data)-cut)...)} {
			os.WriteFile(path, damaged, 0o644)
			err := opencode.Import(context.Background(), []string{path}, opencode.Options{}, &importtest.Target{})
			var pe *transcript.ParseError
			if err != nil && (!errors.As(err, &pe) || pe.File != path) {
				t.Fatalf("cut at %d: not a parse error naming the file: %v", cut, err)
			}
		}
	}
}
