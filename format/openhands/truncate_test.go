package openhands_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/format/openhands"
	"github.com/ctxfold/ctxfold/internal/importtest"
	"github.com/ctxfold/ctxfold/transcript"
)

// Every cut of the fixture (a run stopped while writing, a truncated
// download) either imports or fails with one *transcript.ParseError; the
// fuzz target explores further, this keeps the cuts in every test run.
func TestTruncated(t *testing.T) {
	data, err := os.ReadFile(dir + "output.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "output.jsonl")
	for cut := 0; cut < len(data); cut += 97 {
		os.WriteFile(path, data[:cut], 0o644)
		err := openhands.Import(context.Background(), []string{path}, openhands.Options{}, &importtest.Target{})
		var pe *transcript.ParseError
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("cut at %d: not a parse error: %v", cut, err)
		}
	}
}
