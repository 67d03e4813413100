package importer_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/transcript"
)

// Issue 18 item 7: invalid UTF-8 follows one rule in every import format,
// document and line based alike: an error naming file, line and byte
// (docs/FORMAT.md §7), never a silent U+FFFD, and no session is created.
func TestInvalidUTF8IsAnErrorInEveryFormat(t *testing.T) {
	for _, file := range []string{"openai/messages.json", "openai/body.json", "anthropic/body.json", "chatgpt/conversations.json",
		"gemini/legacy.json", "gemini/session-rewind.jsonl", "codex/rollout-compacted.jsonl", "claude-code/sess-0001.jsonl"} {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(fixtures + file)
			if err != nil {
				t.Fatal(err)
			}
			// Spoil one byte of the first string value on the third
			// line that has one (or the first), inside the string.
			lines := bytes.SplitAfter(data, []byte("\n"))
			at, line := -1, 0
			for i, l := range lines {
				if k := bytes.Index(l, []byte(`": "`)); k >= 0 && (at < 0 || i < 3) {
					at, line = k+4, i
				} else if k := bytes.Index(l, []byte(`":"`)); k >= 0 && (at < 0 || i < 3) {
					at, line = k+3, i
				}
				if line >= 2 && at >= 0 {
					break
				}
			}
			if at < 0 {
				t.Fatal("no string value to spoil")
			}
			lines[line] = append(append(append([]byte{}, lines[line][:at]...), 0xff), lines[line][at:]...)
			dir := t.TempDir()
			in := filepath.Join(dir, filepath.Base(file))
			os.WriteFile(in, bytes.Join(lines, nil), 0o644)
			out := filepath.Join(dir, "s")
			_, err = importer.Import(t.Context(), importer.Options{From: importer.Auto, Files: []string{in}, Out: out})
			var pe *transcript.ParseError
			want := fmt.Sprintf("%s:%d: invalid UTF-8 at byte %d", in, line+1, at+1)
			if !errors.As(err, &pe) || pe.Error() != want {
				t.Fatalf("got %v, want %s", err, want)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a failed import left %s (%v)", out, err)
			}
		})
	}
}
