package importer_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/transcript"
	"github.com/ctxfold/ctxfold/transcript/importer"
	"github.com/ctxfold/ctxfold/transcript/importer/input"
)

// hint is what cmd prints after the error.
func hint(err error) string {
	var h interface{ Hint() string }
	if errors.As(err, &h) {
		return h.Hint()
	}
	return ""
}

// TestWrongFromFailsAndCreatesNothing: a Claude Code file imported with
// --from codex used to succeed with nodes=0, leaving an empty session the
// right --from then refused.
func TestWrongFromFailsAndCreatesNothing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "s")
	_, err := run(t, importer.Codex, out, fixtures+"claude-code/sess-0001.jsonl")
	var pe *transcript.ParseError
	if !errors.As(err, &pe) || pe.Msg != "no Codex records found; the file looks like Claude Code" || !strings.Contains(hint(err), "--from claude-code") {
		t.Fatalf("%v (hint %q)", err, hint(err))
	}
	if _, serr := os.Lstat(out); !errors.Is(serr, os.ErrNotExist) {
		t.Fatalf("the refused import left %s behind", out)
	}
	if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 0 {
		t.Fatalf("the refused import left %v behind", entries)
	}
	if _, err := run(t, importer.ClaudeCode, out, fixtures+"claude-code/sess-0001.jsonl"); err != nil {
		t.Fatalf("the right --from after the wrong one: %v", err)
	}
}

// claudeLine is a Claude Code user record whose text makes it size bytes
// long, with its identifying keys after the text.
func claudeLine(size int) string {
	pad := strings.Repeat("x", size)
	return `{"type":"user","message":{"role":"user","content":"` + pad + `"},"parentUuid":null,"isSidechain":false,"sessionId":"s1","uuid":"u1","timestamp":"2026-02-01T10:00:02.000Z"}` + "\n"
}

func TestDetectLongFirstLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "long.jsonl")
	os.WriteFile(path, []byte(claudeLine(70<<10)), 0o644)
	if got, err := importer.DetectFile(path); err != nil || got != importer.ClaudeCode {
		t.Fatalf("a 70 KB first record: %q %v", got, err)
	}
	// Over the line limit: the line-limit error, naming the flag.
	out := filepath.Join(t.TempDir(), "s")
	_, err := importer.Import(t.Context(), importer.Options{Files: []string{path}, Out: out, Input: input.Options{MaxLineBytes: 32 << 10}})
	var pe *transcript.ParseError
	if !errors.As(err, &pe) || pe.Line != 1 || !strings.Contains(pe.Msg, "longer than the 32768-byte limit (raise it with --max-line-bytes)") {
		t.Fatalf("%v", err)
	}
}

func TestUnsupportedInputs(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct{ body, msg string }{
		"aider.md":       {"# aider chat started at 2026-01-01 10:00:00\n\n#### fix the bug\n", "not a supported export (supported: "},
		"openhands.json": {`{"id": 3, "timestamp": "2026-01-01T10:00:00", "source": "agent", "action": "run", "args": {"command": "ls"}}` + "\n", "not a supported export (supported: "},
		"numbers.json":   {"[1,2,3]\n", "not a supported export (supported: "},
		"empty.jsonl":    {"", "file is empty"},
		"blank.jsonl":    {"\n\n  \n", "file is empty"},
	} {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(tc.body), 0o644)
		_, err := run(t, importer.Auto, filepath.Join(dir, name+".out"), path)
		var pe *transcript.ParseError
		if !errors.As(err, &pe) || !strings.HasPrefix(pe.Msg, tc.msg) || strings.Contains(pe.Msg, "cannot tell") {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if strings.HasPrefix(tc.msg, "not a supported") {
			// The list is the registry's, whatever formats it holds.
			for _, f := range importer.Formats()[1:] {
				if !strings.Contains(pe.Msg, f) {
					t.Errorf("%s: the supported list lacks %s: %s", name, f, pe.Msg)
				}
			}
		}
		if _, serr := os.Lstat(filepath.Join(dir, name+".out")); serr == nil {
			t.Errorf("%s: an output was created", name)
		}
	}
}

func TestImportOfADirectory(t *testing.T) {
	for _, from := range []string{importer.Auto, importer.ClaudeCode} {
		_, err := run(t, from, filepath.Join(t.TempDir(), "s"), fixtures+"claude-code/sess-0001")
		if err == nil || !strings.Contains(err.Error(), "is a directory, not an export file") || strings.Contains(err.Error(), "copy_file_range") {
			t.Errorf("--from %s: %v", from, err)
		}
	}
}
