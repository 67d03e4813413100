package importer_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
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
		"notes.md":       {"# meeting notes\n\n- fix the bug\n", "not a supported export (supported: "},
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
		if err == nil || !strings.Contains(err.Error(), "is a directory") || strings.Contains(err.Error(), "copy_file_range") || strings.Contains(err.Error(), "read ") {
			t.Errorf("--from %s: %v", from, err)
		}
	}
}

// TestReportCountsMediaReferences: a large inline image becomes a sha256
// reference, and the report says so with the bytes it stands for.
func TestReportCountsMediaReferences(t *testing.T) {
	png := make([]byte, 784786)
	for i := range png {
		png[i] = byte(i * 7)
	}
	body := `{"model":"claude-x","messages":[{"role":"user","content":[{"type":"text","text":"what is this?"},` +
		`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + base64.StdEncoding.EncodeToString(png) + `"}}]},` +
		`{"role":"assistant","content":"a picture"}]}`
	path := filepath.Join(t.TempDir(), "body.json")
	os.WriteFile(path, []byte(body), 0o644)
	out := filepath.Join(t.TempDir(), "s")
	rep, err := run(t, importer.Anthropic, out, path)
	if err != nil {
		t.Fatal(err)
	}
	if s := rep.Sessions[0]; s.MediaReferences != 1 || s.MediaBytes != 784786 {
		t.Fatalf("media %d refs, %d bytes; want 1, 784786", s.MediaReferences, s.MediaBytes)
	}
	if nodes, _ := os.ReadFile(filepath.Join(out, store.NodesFile)); len(nodes) > 10000 {
		t.Fatalf("the image bytes were stored (%d bytes)", len(nodes))
	}
}

// TestClaudeCodeReportsSubagentFiles: the sub-agent files found beside a
// session are listed; with them gone, the ones the session spawned are
// listed as missing, with a warning naming where they were looked for.
func TestClaudeCodeReportsSubagentFiles(t *testing.T) {
	rep, err := run(t, importer.Auto, filepath.Join(t.TempDir(), "s"), fixtures+"claude-code/sess-0001.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Sessions[0]
	if len(s.AttachedFiles) != 2 || !strings.HasSuffix(s.AttachedFiles[1], filepath.Join("sess-0001", "subagents", "agent-sub1.jsonl")) || len(s.MissingFiles) != 0 {
		t.Fatalf("attached %q missing %q", s.AttachedFiles, s.MissingFiles)
	}
	alone := filepath.Join(t.TempDir(), "sess-0001.jsonl")
	data, _ := os.ReadFile(fixtures + "claude-code/sess-0001.jsonl")
	os.WriteFile(alone, data, 0o644)
	rep, err = run(t, importer.Auto, filepath.Join(t.TempDir(), "s"), alone)
	if err != nil {
		t.Fatal(err)
	}
	s = rep.Sessions[0]
	want := filepath.Join(strings.TrimSuffix(alone, ".jsonl"), "subagents", "agent-sub1.jsonl")
	if len(s.AttachedFiles) != 0 || len(s.MissingFiles) != 1 || s.MissingFiles[0] != want {
		t.Fatalf("attached %q missing %q, want missing %s", s.AttachedFiles, s.MissingFiles, want)
	}
	if w := strings.Join(rep.Warnings, "\n"); !strings.Contains(w, "sub-agent sub1 was spawned but no file holds its turns") || !strings.Contains(w, want) {
		t.Fatalf("warnings: %s", w)
	}
}

// TestImportReportsProgress: the node count reaches Options.Progress while
// the import runs, a thousand at a time.
func TestImportReportsProgress(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"messages":[`)
	for i := range 3000 {
		if i > 0 {
			b.WriteByte(',')
		}
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		fmt.Fprintf(&b, `{"role":%q,"content":"message %d"}`, role, i)
	}
	b.WriteString(`]}`)
	path := filepath.Join(t.TempDir(), "body.json")
	os.WriteFile(path, []byte(b.String()), 0o644)
	var seen int
	_, err := importer.Import(t.Context(), importer.Options{From: importer.OpenAI, Files: []string{path}, Out: filepath.Join(t.TempDir(), "s"),
		Progress: func(n int) { seen += n }})
	if err != nil || seen != 2048 {
		t.Fatalf("progress saw %d nodes of 3000 (want 2048, in steps of 1024): %v", seen, err)
	}
}

// TestDetectOneLineDocumentOverTheLineLimit: a JSON export written on one
// line is longer than any line limit; its head alone names the format.
func TestDetectOneLineDocumentOverTheLineLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"messages":[`)
	for i := range 2000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"role":"user","content":"message number %d of a long one-line body"}`, i)
	}
	b.WriteString(`]}`)
	path := filepath.Join(t.TempDir(), "body.json")
	os.WriteFile(path, []byte(b.String()), 0o644)
	out := filepath.Join(t.TempDir(), "s")
	rep, err := importer.Import(t.Context(), importer.Options{Files: []string{path}, Out: out, Input: input.Options{MaxLineBytes: 32 << 10}})
	if err != nil {
		t.Fatalf("a %d-byte one-line body with a 32 KB line limit: %v", b.Len(), err)
	}
	// Detected as what it is, and read whole: every message a node.
	if rep.Format != importer.OpenAI || len(rep.Sessions) != 1 || rep.Sessions[0].Nodes != 2000 {
		t.Fatalf("detected %q with %d sessions (%+v), want one OpenAI body of 2000 nodes", rep.Format, len(rep.Sessions), rep.Sessions)
	}
	s, err := store.Open(rep.Sessions[0].Dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	last, err := s.Node(s.Len() - 1)
	if err != nil || last.Content.PlainText() != "message number 1999 of a long one-line body" {
		t.Fatalf("last node %+v (%v), want the body's last message", last, err)
	}
}
