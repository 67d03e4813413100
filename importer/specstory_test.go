package importer_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/importer"
)

// Issue 29 item 11: a SpecStory Markdown export (v2.1.0) is named as such,
// with the original transcript to import instead, and nothing is written.
func TestSpecStoryExportNamedWithItsOriginal(t *testing.T) {
	src := filepath.Join("..", "format", "specstory", "testdata", "claude-code-v2.1.0.md")
	out := filepath.Join(t.TempDir(), "s")
	_, err := importer.Import(t.Context(), importer.Options{Files: []string{src}, Out: out})
	var fe *importer.FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("import of a SpecStory export: %v, want a FormatError", err)
	}
	if !strings.Contains(err.Error(), "claude-code-v2.1.0.md:1: SpecStory Markdown export (Markdown v2.1.0) of a Claude Code session 0c1f5a1e-2b7d-4f3a-9a61-5d2e8b7c4f10") {
		t.Errorf("error %q does not name the format and session", err)
	}
	if !strings.Contains(fe.Hint(), "ctxfold import ~/.claude/projects/<project>/0c1f5a1e-2b7d-4f3a-9a61-5d2e8b7c4f10.jsonl -o DIR") {
		t.Errorf("hint %q does not point at the original transcript", fe.Hint())
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused import left %s (%v)", out, err)
	}
	// Any other Markdown: the list of formats names SpecStory's as known.
	notes := filepath.Join(t.TempDir(), "notes.md")
	os.WriteFile(notes, []byte("# notes\n\n- a\n"), 0o644)
	if _, err := importer.DetectFile(notes); err == nil || !strings.Contains(err.Error(), "recognised but not imported: SpecStory Markdown exports") {
		t.Errorf("undetected Markdown: %v", err)
	}
}
