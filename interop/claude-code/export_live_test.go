package claudecodeinterop

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/compact"
	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/export"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/internal/fake/anthropic"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/summarize"
	"github.com/ctxfold/ctxfold/transcript"

	"github.com/ctxfold/ctxfold/internal/hooktest"
)

// TestLiveExportResume is issue "export"'s acceptance with the real client:
// a session the client recorded is imported, compacted offline by ctxfold,
// exported where Claude Code looks, and resumed with `claude -p … --resume`
// against the fake provider. The request the client then sends holds
// ctxfold's summary and the kept tail verbatim and none of the covered
// turns; the client appends its reply to the exported file, and a
// re-import shows the reply after the kept tail.
func TestLiveExportResume(t *testing.T) {
	client := liveClient(t)
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, work := filepath.Join(tmp, "home"), filepath.Join(tmp, "work")
	for _, d := range []string{home, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	reqs := filepath.Join(tmp, "requests")
	srv, err := anthropic.Start(anthropic.Options{RecordDir: reqs})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cfg := Config{Client: client, StepTimeout: 3 * time.Minute}
	cfg.Log = &bytes.Buffer{}
	covered := []string{"Covered turn alpha-7731.", "Covered turn bravo-7732 [[bash:echo covered-output-7733]]", "Covered turn charlie-7734."}
	kept := "Kept turn delta-7735."
	for i, p := range append(covered, kept) {
		flag := "--resume"
		if i == 0 {
			flag = "--session-id"
		}
		if err := runStep(ctx, cfg, srv.URL, home, work, printStep(p, flag, sessA)); err != nil {
			t.Fatalf("recording turn %d: %v", i+1, err)
		}
	}
	projects := filepath.Join(home, ".claude", "projects", slug(work))
	session := filepath.Join(t.TempDir(), "s")
	if _, err := importer.Import(ctx, importer.Options{From: importer.Auto, Files: []string{filepath.Join(projects, sessA+".jsonl")}, Out: session}); err != nil {
		t.Fatal(err)
	}
	// The uncompacted session exported as it is: resumed, it must send
	// what a plain resume sends, each context block once.
	const resumedRaw = "5e55a0a0-0000-4000-8000-0000000000e2"
	exportClaudeCode(ctx, t, session, filepath.Join(home, ".claude"), work, resumedRaw)
	// Keep only the last turn: its user line and the reply.
	res, err := compact.Compact(ctx, compact.Options{Dir: session, Summarizer: summarize.Extractive{}, KeepTokens: 1,
		Estimate: estimate.Options{NoCache: true, Model: "claude-sonnet-4-5"}})
	if err != nil || res.Outcome != compact.OutcomeSucceeded {
		t.Fatalf("compact: %v %+v", err, res)
	}
	summaryText := sessiontest.StoredNode(t, session, res.SummaryID).Content.PlainText()

	const resumed = "5e55a0a0-0000-4000-8000-0000000000e1"
	path := exportClaudeCode(ctx, t, session, filepath.Join(home, ".claude"), work, resumed)
	// The reference: the same question on a plain resume of the original.
	before := countFiles(t, reqs)
	if err := runStep(ctx, cfg, srv.URL, home, work, printStep("Next question echo-7736.", "--resume", sessA)); err != nil {
		t.Fatalf("the client did not resume the original: %v", err)
	}
	plain := mainRequest(t, reqs, before, "echo-7736")
	before = countFiles(t, reqs)
	if err := runStep(ctx, cfg, srv.URL, home, work, printStep("Next question echo-7736.", "--resume", resumed)); err != nil {
		t.Fatalf("the client did not resume the export: %v", err)
	}
	req := mainRequest(t, reqs, before, "echo-7736")
	compareWithPlainResume(t, plain, req, "alpha-7731")
	before = countFiles(t, reqs)
	if err := runStep(ctx, cfg, srv.URL, home, work, printStep("Next question echo-7736.", "--resume", resumedRaw)); err != nil {
		t.Fatalf("the client did not resume the uncompacted export: %v", err)
	}
	raw := mainRequest(t, reqs, before, "echo-7736")
	// The same text blocks, each as often; the client puts the context it
	// adds again (environment, attribution) before the new question
	// rather than before the first turn.
	if got, want := countTexts(textBlocks(t, messagesOf(t, raw))), countTexts(textBlocks(t, messagesOf(t, plain))); !reflect.DeepEqual(got, want) {
		t.Errorf("the uncompacted export's resume sends other text blocks than a plain resume:\nexport: %v\nplain:  %v", got, want)
	}
	t.Logf("the uncompacted export's resume: %d bytes (the plain resume %d)", len(raw), len(plain))
	for _, want := range []string{strings.TrimPrefix(summaryText, transcript.SummaryPrefix)[:200], kept, "Next question echo-7736."} {
		if !strings.Contains(req, hooktest.JSONText(want)) {
			t.Errorf("the resumed request lacks %q", want)
		}
	}
	// The summary may quote the covered turns; no other message may.
	var body struct{ Messages []json.RawMessage }
	if err := json.Unmarshal([]byte(req), &body); err != nil {
		t.Fatal(err)
	}
	summaryAt := -1
	for i, m := range body.Messages {
		if summaryAt < 0 && strings.Contains(string(m), hooktest.JSONText(strings.TrimPrefix(summaryText, transcript.SummaryPrefix)[:200])) {
			summaryAt = i
			continue
		}
		for _, gone := range []string{"alpha-7731", "covered-output-7733", "charlie-7734"} {
			if strings.Contains(string(m), gone) {
				t.Errorf("message %d of the resumed request carries the covered turn text %q", i, gone)
			}
		}
	}
	if summaryAt < 0 {
		t.Fatal("no message of the resumed request holds the summary")
	}
	t.Logf("the resumed request: %d messages, the summary in message %d", len(body.Messages), summaryAt)
	// The client appended its reply; a re-import shows it after the tail.
	back := filepath.Join(t.TempDir(), "back")
	if _, err := importer.Import(ctx, importer.Options{From: importer.Auto, Files: []string{path}, Out: back}); err != nil {
		t.Fatal(err)
	}
	view := sessiontest.Rendered(t, back, render.FormatText)
	k, q := strings.Index(view, kept), strings.Index(view, "Next question echo-7736.")
	if k < 0 || q < k || !strings.Contains(view[q:], "assistant") {
		t.Fatalf("the re-imported view does not end with the new question and its reply after the kept tail:\n%s", view)
	}
}

// compareWithPlainResume checks the resumed export's request against a
// plain resume of the original with the same question (issue 29 item 1):
// the same system prompt and tools; the same messages before the first
// covered turn (firstCovered), minus that turn's own text: the context the
// client adds (CLAUDE.md, reminders); every text block of the plain resume
// that is sent at most once sent at most once (no instruction block
// twice); and fewer bytes than the uncompacted request.
func compareWithPlainResume(t *testing.T, plain, exported, firstCovered string) {
	t.Helper()
	var p, e struct {
		System   []map[string]any
		Tools    []map[string]any
		Messages []struct {
			Role    string
			Content json.RawMessage
		}
	}
	if err := json.Unmarshal([]byte(plain), &p); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(exported), &e); err != nil {
		t.Fatal(err)
	}
	t.Logf("plain resume: %d bytes, %d messages; resumed export: %d bytes, %d messages", len(plain), len(p.Messages), len(exported), len(e.Messages))
	if len(p.System) < 2 || len(e.System) != len(p.System) || !reflect.DeepEqual(e.System[1:], p.System[1:]) {
		t.Errorf("the system prompt differs from the plain resume's (%d and %d blocks)", len(e.System), len(p.System))
	}
	if !reflect.DeepEqual(e.Tools, p.Tools) {
		t.Errorf("the tools differ from the plain resume's (%d and %d)", len(e.Tools), len(p.Tools))
	}
	pb, eb := textBlocks(t, p.Messages), textBlocks(t, e.Messages)
	for _, b := range pb {
		t.Logf("plain resume, block: %.100q", b)
	}
	for _, b := range eb {
		t.Logf("resumed export, block: %.100q", b)
	}
	for text, n := range countTexts(eb) {
		if n > 1 && n > countTexts(pb)[text] {
			t.Errorf("the resumed export sends %d copies of %.120q (the plain resume %d)", n, text, countTexts(pb)[text])
		}
	}
	for _, b := range pb {
		if strings.Contains(b, firstCovered) {
			break
		}
		if countTexts(eb)[b] != 1 {
			t.Errorf("the plain resume's context block %.120q is sent %d times by the resumed export", b, countTexts(eb)[b])
		}
	}
	if len(exported) >= len(plain) {
		t.Errorf("the resumed export's request (%d bytes) is not smaller than the uncompacted plain resume's (%d)", len(exported), len(plain))
	}
}

// textBlocks are the texts of the messages' text blocks (string content
// as one block), without cache markers.
func textBlocks(t *testing.T, msgs []message) []string {
	t.Helper()
	var out []string
	for _, m := range msgs {
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			out = append(out, s)
			continue
		}
		var blocks []struct{ Type, Text string }
		if err := json.Unmarshal(m.Content, &blocks); err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			if b.Type == "text" {
				out = append(out, b.Text)
			}
		}
	}
	return out
}

func countTexts(list []string) map[string]int {
	n := map[string]int{}
	for _, s := range list {
		n[s]++
	}
	return n
}

// exportClaudeCode exports the session's HEAD where Claude Code looks for
// session id, and returns the path.
func exportClaudeCode(ctx context.Context, t *testing.T, session, claudeHome, work, id string) string {
	t.Helper()
	g, err := dag.Open(session, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	path := export.ClaudeCodePath(claudeHome, work, id)
	err = export.WriteFile(path, false, func(w io.Writer) error {
		_, err := export.Export(ctx, g, w, export.ClaudeCode, export.Options{SessionID: id, CWD: work})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return path
}

type message = struct {
	Role    string
	Content json.RawMessage
}

func messagesOf(t *testing.T, req string) []message {
	t.Helper()
	var body struct{ Messages []message }
	if err := json.Unmarshal([]byte(req), &body); err != nil {
		t.Fatal(err)
	}
	return body.Messages
}

func liveClient(t *testing.T) string {
	t.Helper()
	if os.Getenv("CTXFOLD_INTEROP_LIVE") == "" {
		t.Skip("set CTXFOLD_INTEROP_LIVE=1 to drive the installed Claude Code " + Version)
	}
	return claudeBin(t)
}

func countFiles(t *testing.T, dir string) int {
	t.Helper()
	es, _ := os.ReadDir(dir)
	return len(es)
}

// mainRequest is the first messages request recorded after skip files
// whose body holds marker (side requests, such as a title, come and go).
func mainRequest(t *testing.T, dir string, skip int, marker string) string {
	t.Helper()
	es, _ := os.ReadDir(dir)
	names := make([]string, 0, len(es))
	for _, e := range es {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	for _, n := range names[skip:] {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(n, "messages") && bytes.Contains(b, []byte(marker)) && bytes.Contains(b, []byte(`"tools"`)) {
			return string(b)
		}
	}
	t.Fatalf("no request with %q among %v", marker, names[skip:])
	return ""
}
