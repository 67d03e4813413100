package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/export"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// geminiResumed is the message list Gemini CLI 0.61 resumes a session file
// with, by its loader's rules (loadConversationRecord): message records by
// id in file order, a {"$set": {"messages"}} record replacing the list.
func geminiResumed(t *testing.T, data []byte) [][]byte {
	t.Helper()
	var ids []string
	byID := map[string]json.RawMessage{}
	for i, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var rec struct {
			ID  string `json:"id"`
			Set *struct {
				Messages []json.RawMessage `json:"messages"`
			} `json:"$set"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		switch {
		case rec.ID != "":
			if _, ok := byID[rec.ID]; !ok {
				ids = append(ids, rec.ID)
			}
			byID[rec.ID] = line
		case rec.Set != nil && rec.Set.Messages != nil:
			ids, byID = nil, map[string]json.RawMessage{}
			for _, m := range rec.Set.Messages {
				var x struct{ ID string }
				_ = json.Unmarshal(m, &x)
				ids = append(ids, x.ID)
				byID[x.ID] = m
			}
		}
	}
	out := make([][]byte, len(ids))
	for i, id := range ids {
		out[i] = byID[id]
	}
	return out
}

// TestGeminiExport: a ctxfold-compacted session exported to Gemini CLI
// resumes with the summary (as a <state_snapshot>), the model's
// acknowledgement and the kept tail, and no covered turn; the covered
// turns are still in the file, and a re-import gives back the same raw
// conversation and a summary covering as many nodes. Uncompacted, every
// turn is resumed. On the shipped tool fixture, on a real Claude Code
// transcript, and on Gemini CLI's own compression (recorded with the real
// client), whose snapshot is written as the client sent it.
func TestGeminiExport(t *testing.T) {
	cases := []struct {
		name string
		dir  func(t *testing.T) string
		keep int
	}{
		{"tools", func(t *testing.T) string { return sessiontest.CopyFixture(t, "tools") }, 200},
		{"marot", func(t *testing.T) string {
			return importShared(t, "claude-code/marot-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl")
		}, 3000},
		{"gemini-compression", func(t *testing.T) string {
			src := filepath.Join(sessiontest.FixturesDir(), "..", "testdata", "interop", "gemini-cli", "0.61.0", "compression", "chats",
				"session-2026-01-01T00-00-00000001.jsonl")
			out := filepath.Join(t.TempDir(), "s")
			if _, err := importer.Import(context.Background(), importer.Options{From: "auto", Files: []string{src}, Out: out}); err != nil {
				t.Fatal(err)
			}
			return out
		}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.dir(t)
			raw, res := exportTo(t, dir, export.Gemini, export.Options{})
			if tc.keep == 0 {
				checkGeminiCompacted(t, dir, raw, res)
				return
			}
			// Every node of the view is resumed (a real transcript may
			// hold its client's own summary: it is exported as one).
			resumed := string(bytes.Join(geminiResumed(t, raw), nil))
			_, ids := viewOf(t, dir, render.FormatGemini, false)
			for _, id := range ids {
				n := sessiontest.StoredNode(t, dir, id)
				if text := firstText(n); text != "" && n.Role != transcript.RoleSystem && !n.IsSummary() && !strings.Contains(resumed, jsonText(text)) {
					t.Errorf("node %s's text is not resumed: %.80q", id, text)
				}
			}
			compactSession(t, dir, tc.keep)
			data, res := exportTo(t, dir, export.Gemini, export.Options{})
			if res.Summary == "" {
				t.Fatal("the compacted branch exported without its summary")
			}
			checkGeminiCompacted(t, dir, data, res)
		})
	}
}

// checkGeminiCompacted checks a compacted export: what the CLI resumes,
// and the re-import.
func checkGeminiCompacted(t *testing.T, dir string, data []byte, res *export.Result) {
	t.Helper()
	resumed := geminiResumed(t, data)
	all := string(bytes.Join(resumed, nil))
	if !strings.Contains(all, "<state_snapshot>") || !strings.Contains(all, "Got it. Thanks for the additional context!") {
		t.Errorf("the resumed list has no snapshot and acknowledgement")
	}
	summary := strings.TrimPrefix(sessiontest.StoredNode(t, dir, res.Summary).Content.PlainText(), transcript.SummaryPrefix)
	if !strings.Contains(all, jsonText(firstLine(summary))) {
		t.Errorf("the resumed list lacks the summary's first line %q", firstLine(summary))
	}
	covers, kept := activeCovers(t, dir), keptIDs(t, dir)
	var keptText strings.Builder
	for _, id := range kept {
		keptText.WriteString(sessiontest.StoredNode(t, dir, id).Content.PlainText())
	}
	for _, id := range covers {
		n := sessiontest.StoredNode(t, dir, id)
		text := firstText(n)
		if text == "" || strings.HasPrefix(text, "<session_context>") || strings.Contains(summary, text) || strings.Contains(keptText.String(), text) {
			continue
		}
		if strings.Contains(all, jsonText(text)) {
			t.Errorf("covered node %s is resumed: %.80q", id, text)
		}
		if !bytes.Contains(data, []byte(jsonText(text))) {
			t.Errorf("covered node %s is not in the file before the compression", id)
		}
	}
	for _, id := range kept {
		if text := firstText(sessiontest.StoredNode(t, dir, id)); text != "" && !strings.Contains(all, jsonText(text)) {
			t.Errorf("kept node %s is not resumed: %.80q", id, text)
		}
	}
	back := importFile(t, data, "session-x.jsonl")
	if want, got := renderedRaw(t, dir), renderedRaw(t, back); want != got {
		t.Errorf("the re-imported raw conversation differs\nwant %.600s\ngot  %.600s", want, got)
	}
	if gc := activeCovers(t, back); len(gc) != len(slices.DeleteFunc(covers, func(id string) bool {
		return sessiontest.StoredNode(t, dir, id).Role == transcript.RoleSystem
	})) {
		t.Errorf("the re-import's summary covers %d nodes, want %d", len(gc), len(covers))
	}
}

func TestGeminiPath(t *testing.T) {
	home := t.TempDir()
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	const id = "0b7e8a52-3c1d-4e2f-9a6b-7c8d9e0f1a2b"
	want := filepath.Join(home, "tmp", export.GeminiProjectHash("/work/app"), "chats", "session-2026-03-04T05-06-0b7e8a52.jsonl")
	if got := export.GeminiPath(home, "/work/app", id, at); got != want {
		t.Errorf("unregistered project: %s, want %s", got, want)
	}
	if err := os.MkdirAll(filepath.Join(home, "tmp", "app-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "tmp", "app-1", ".project_root"), []byte("/work/app\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := export.GeminiPath(home, "/work/app", id, at); !strings.Contains(got, "/tmp/app-1/chats/") {
		t.Errorf("the folder whose .project_root names the project: %s", got)
	}
	if err := os.WriteFile(filepath.Join(home, "projects.json"), []byte(`{"projects":{"/work/app":"app","/x":"../evil"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := export.GeminiPath(home, "/work/app", id, at); !strings.Contains(got, "/tmp/app/chats/") {
		t.Errorf("the folder projects.json names: %s", got)
	}
	if got := export.GeminiPath(home, "/x", id, at); !strings.Contains(got, export.GeminiProjectHash("/x")) {
		t.Errorf("a registry name that is not one folder is not followed: %s", got)
	}
}

// viewOf renders dir's HEAD (raw: every node of the branch) in format f
// and returns the text and the view's ids.
func viewOf(t *testing.T, dir string, f render.Format, raw bool) (string, []string) {
	t.Helper()
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	v, err := render.Build(g, "", raw)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := render.Write(&b, v, f); err != nil {
		t.Fatal(err)
	}
	return b.String(), v.IDs()
}

func renderedRaw(t *testing.T, dir string) string {
	s, _ := viewOf(t, dir, render.FormatGemini, true)
	var body render.GeminiBody
	if err := json.Unmarshal([]byte(s), &body); err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(body.Contents, "", " ")
	return string(b)
}

func nodeIDs(t *testing.T, dir string) []string {
	t.Helper()
	_, ids := viewOf(t, dir, render.FormatAnthropic, true)
	return ids
}

func keptIDs(t *testing.T, dir string) []string {
	t.Helper()
	_, ids := viewOf(t, dir, render.FormatAnthropic, false)
	for i, id := range ids {
		if strings.HasPrefix(id, "summary_") {
			return ids[i+1:]
		}
	}
	return nil
}

// firstText is a node's longest line of text (the most telling part any
// format carries verbatim), "" when it is short.
func firstText(n *transcript.Node) string {
	best := ""
	for _, l := range strings.Split(n.Content.PlainText(), "\n") {
		if l = strings.TrimSpace(l); len(l) > len(best) {
			best = l
		}
	}
	if len(best) <= 12 {
		return ""
	}
	return best
}

func jsonText(s string) string {
	b, _ := json.Marshal(s)
	var buf bytes.Buffer
	_ = json.Compact(&buf, b)
	out := buf.String()
	out = strings.ReplaceAll(out, `\u003c`, "<")
	out = strings.ReplaceAll(out, `\u003e`, ">")
	out = strings.ReplaceAll(out, `\u0026`, "&")
	return out[1 : len(out)-1]
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "#") {
			return l
		}
	}
	return s
}
