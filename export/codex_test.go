package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/export"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/render"
)

// TestCodexExportSendsInstructionsOnce (issue 29 #1): on a rollout the real
// Codex 0.169 recorded (three turns), compacted, the export carries the base
// instructions in session_meta only, where Codex reads them on resume, and
// its compacted record leaves out what Codex sends itself — the base
// instructions and its own initial context (skills, environment) — as
// Codex's own compacted record does. The live proof is
// interop/codex TestLiveExportResume.
func TestCodexExportSendsInstructionsOnce(t *testing.T) {
	rollout := filepath.Join(sessiontest.FixturesDir(), "..", "testdata", "interop", "codex", "0.169.0", "chat",
		"rollout-2026-01-01T00-00-00-00000000-0000-7000-8000-000000000001.jsonl")
	dir := filepath.Join(t.TempDir(), "s")
	if _, err := importer.Import(context.Background(), importer.Options{From: "auto", Files: []string{rollout}, Out: dir}); err != nil {
		t.Fatal(err)
	}
	const baseStart = "You are Codex, a coding agent"
	// Uncompacted: every item is sent again on resume, so none may be what
	// Codex sends itself.
	raw, _ := exportTo(t, dir, export.Codex, export.Options{})
	for i, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n"))[1:] {
		for _, own := range []string{baseStart, "skills_instructions", "environment_context"} {
			if bytes.Contains(line, []byte(own)) {
				t.Errorf("uncompacted export, line %d: an item carries %q, which Codex sends itself", i+2, own)
			}
		}
	}
	compactSession(t, dir, 1)
	data, _ := exportTo(t, dir, export.Codex, export.Options{})
	var base string
	for i, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var rec struct {
			Type    string
			Payload struct {
				BaseInstructions   *struct{ Text string } `json:"base_instructions"`
				ReplacementHistory []json.RawMessage      `json:"replacement_history"`
			}
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		switch rec.Type {
		case "session_meta":
			if rec.Payload.BaseInstructions != nil {
				base = rec.Payload.BaseInstructions.Text
			}
		case "response_item":
			if strings.Contains(string(line), baseStart) {
				t.Errorf("line %d: a response item repeats the base instructions", i+1)
			}
		case "compacted":
			for _, it := range rec.Payload.ReplacementHistory {
				for _, own := range []string{baseStart, "skills_instructions", "environment_context"} {
					if strings.Contains(string(it), own) {
						t.Errorf("the replacement history carries %q, which Codex sends itself: %.120s", own, it)
					}
				}
			}
			if len(rec.Payload.ReplacementHistory) == 0 {
				t.Error("the replacement history is empty; it must end with the summary")
			}
		}
	}
	if !strings.HasPrefix(base, baseStart) {
		t.Fatalf("session_meta carries no base instructions (%.60q)", base)
	}
	back := importFile(t, data, "export.jsonl")
	var msgs []struct{ Role, Content string }
	if err := json.Unmarshal([]byte(sessiontest.Rendered(t, back, render.FormatOpenAI)), &msgs); err != nil {
		t.Fatal(err)
	}
	if len(msgs) == 0 || msgs[0].Role != "system" || msgs[0].Content != base {
		t.Error("a re-import does not start from the base instructions session_meta carries")
	}
}

// TestClaudeCodeExportLeavesClientContext (issue 29 #1): the attribution
// reminder Claude Code 2.1.328 recorded as an attachment is its own session
// context, which it adds again to a resumed session: the export must not
// write it as a user line, or a resume sends it twice
// (interop/claude-code TestLiveExportResume).
func TestClaudeCodeExportLeavesClientContext(t *testing.T) {
	file := filepath.Join(sessiontest.FixturesDir(), "..", "testdata", "interop", "claude-code", "2.1.328", "chat", "transcript",
		"00000000-0000-4000-8000-000000000001.jsonl")
	dir := filepath.Join(t.TempDir(), "s")
	if _, err := importer.Import(context.Background(), importer.Options{From: "auto", Files: []string{file}, Out: dir}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sessiontest.Rendered(t, dir, render.FormatText), "Attribution for git commits") {
		t.Fatal("the fixture no longer holds the attribution reminder this test is about")
	}
	data, res := exportTo(t, dir, export.ClaudeCode, export.Options{})
	if bytes.Contains(data, []byte("Attribution for git commits")) {
		t.Error("the export writes Claude Code's attribution reminder as a user line")
	}
	found := false
	for _, w := range res.Warnings {
		found = found || w.Kind == "client_context"
	}
	if !found {
		t.Errorf("no client_context warning: %+v", res.Warnings)
	}
}
