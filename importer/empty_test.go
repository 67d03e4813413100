package importer_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/transcript"
)

// TestRefuseEmpty: a file detected as a format but holding no message of
// it is an error naming the formats under RefuseEmpty (ctxfold import),
// never a silent empty session; without it (live, a transcript with no
// message yet) it imports as an empty session.
func TestRefuseEmpty(t *testing.T) {
	file := filepath.Join(t.TempDir(), "session.jsonl")
	os.WriteFile(file, []byte(`{"sessionId":"s","projectHash":"p","startTime":"2026-01-01T00:00:00Z"}`+"\n"), 0o644)
	out := filepath.Join(t.TempDir(), "s")
	_, err := importer.Import(context.Background(), importer.Options{From: importer.Auto, Files: []string{file}, Out: out, RefuseEmpty: true})
	var pe *transcript.ParseError
	if !errors.As(err, &pe) || !strings.Contains(pe.Msg, "looks like Gemini CLI but holds no message of it") || !strings.Contains(pe.Msg, "copilot") || !strings.Contains(pe.Msg, "supported: ") {
		t.Fatalf("%v", err)
	}
	if _, serr := os.Lstat(out); !errors.Is(serr, os.ErrNotExist) {
		t.Fatalf("the refused import left %s behind", out)
	}
	if _, err := importer.Import(context.Background(), importer.Options{From: importer.Auto, Files: []string{file}, Out: out}); err != nil {
		t.Fatalf("without RefuseEmpty: %v", err)
	}
}
