package pi_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/format/pi"
	"github.com/ctxfold/ctxfold/internal/importtest"
	"github.com/ctxfold/ctxfold/transcript"
)

const dir = "../../fixtures/import/pi/"

func load(t *testing.T, file string) (*importtest.Conv, error) {
	t.Helper()
	var tg importtest.Target
	err := pi.Import(context.Background(), []string{file}, input.Options{}, &tg)
	if len(tg.Convs) == 0 {
		return nil, err
	}
	return tg.Convs[0], err
}

func byID(nodes []transcript.Node) map[string]transcript.Node {
	m := map[string]transcript.Node{}
	for _, n := range nodes {
		m[n.ID] = n
	}
	return m
}

func ids(nodes []transcript.Node) string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.ID)
	}
	return strings.Join(out, " ")
}

// TestTree: the id/parentId tree with a branch, the entries pi never sends
// transparent in the chain, the aborted reply and the !! command left out
// as pi leaves them out, and the compaction covering what precedes its
// first kept entry.
func TestTree(t *testing.T) {
	c, err := load(t, dir+"session-tree.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(c.Nodes), "u1 a1 t1 a2 u2 b1 x1 c1 u3 a4 summary_k1 u4"; got != want {
		t.Fatalf("nodes %s, want %s", got, want)
	}
	n := byID(c.Nodes)
	for id, pred := range map[string]string{"u1": "", "u2": "a2", "b1": "a2", "x1": "b1", "c1": "x1", "u3": "c1", "u4": "a4", "summary_k1": ""} {
		if n[id].Predecessor != pred {
			t.Errorf("%s follows %q, want %q", id, n[id].Predecessor, pred)
		}
	}
	if c.Head != "u4" || c.Model != "claude-sonnet-4-5" || c.Name != "11111111-2222-4333-8444-555555555555" {
		t.Errorf("head %q model %q name %q", c.Head, c.Model, c.Name)
	}
	if u := n["a1"].Usage; u == nil || u.InputTokens != 1210 || u.CachedInputTokens != 1000 || u.OutputTokens != 20 {
		t.Errorf("a1 usage %+v: want the whole prompt (input + cacheRead + cacheWrite)", u)
	}
	a1 := n["a1"]
	if len(a1.ToolCalls) != 1 || a1.ToolCalls[0].ID != "toolu_1" || a1.Content.Blocks[0].Type != transcript.BlockThinking || a1.Content.Blocks[0].Signature != "sig1" {
		t.Errorf("a1 %+v", a1)
	}
	if tr := n["t1"]; tr.Role != transcript.RoleTool || tr.ToolCallID != "toolu_1" || tr.Content.Text != "a.go\nb.go" {
		t.Errorf("t1 %+v", tr)
	}
	if u2 := n["u2"]; len(u2.Content.Blocks) != 2 || u2.Content.Blocks[1].Type != transcript.BlockImage || !strings.HasPrefix(u2.Content.Blocks[1].Source, "sha256:") {
		t.Errorf("u2 %+v", u2.Content)
	}
	if txt := n["x1"].Content.PlainText(); txt != "Ran `git status`\n```\nclean\n```" {
		t.Errorf("bash text %q", txt)
	}
	if txt := n["b1"].Content.PlainText(); !strings.Contains(txt, "summary of a branch") || !strings.Contains(txt, "aborted.</summary>") {
		t.Errorf("branch summary %q", txt)
	}
	s := n["summary_k1"]
	if got := string(s.Metadata["covers_ids"]); got != `["u1","a1","t1","a2","b1","x1","c1"]` {
		t.Errorf("covers %s", got)
	}
	if !strings.HasPrefix(s.Content.Text, transcript.SummaryPrefix+"The conversation history before this point was compacted") || s.Name != transcript.SummaryName {
		t.Errorf("summary %+v", s)
	}
	for rec, outcome := range map[string]string{"message/assistant": transcript.OutcomeSkipped, "message/bashExecution": transcript.OutcomeSkipped,
		"label": transcript.OutcomeSkipped, "custom": transcript.OutcomeSkipped, "session_info": transcript.OutcomeSkipped,
		"model_change": transcript.OutcomeMerged, "session": transcript.OutcomeMerged, "compaction": transcript.OutcomeImported} {
		if c.Counts[[2]string{rec, outcome}] != 1 {
			t.Errorf("%s %s counted %d times, want 1", rec, outcome, c.Counts[[2]string{rec, outcome}])
		}
	}
}

// TestVersion1: a file without ids is a chain in file order, a hookMessage
// is a user message and firstKeptEntryIndex names the kept entry, as pi's
// migration reads them.
func TestVersion1(t *testing.T) {
	c, err := load(t, dir+"session-v1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(c.Nodes), "line2 line3 line4 line5 line6 summary_line7 line8"; got != want {
		t.Fatalf("nodes %s, want %s", got, want)
	}
	n := byID(c.Nodes)
	if n["line5"].Predecessor != "line4" || n["line8"].Predecessor != "line6" || c.Head != "line8" {
		t.Errorf("chain: line5 follows %q, line8 %q, head %q", n["line5"].Predecessor, n["line8"].Predecessor, c.Head)
	}
	if got := string(n["summary_line7"].Metadata["covers_ids"]); got != `["line2","line3","line4"]` {
		t.Errorf("covers %s", got)
	}
	if n["line4"].Role != transcript.RoleUser || n["line4"].Content.PlainText() != "hook text" {
		t.Errorf("hook message %+v", n["line4"])
	}
}

func TestErrors(t *testing.T) {
	tmp := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	header := `{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}` + "\n"
	for _, tc := range []struct{ name, body, want string }{
		{"unknown-parent", "", "malformed.jsonl:2: entry \"u1\": parentId \"nope\" names no earlier entry"},
		{"empty", "", "an empty file"},
		{"no-header", `{"type":"message","id":"u","parentId":null}` + "\n", "expected a pi session header"},
		{"bad-json", header + "{not json\n{}\n", "bad-json.jsonl:2: expected a pi session entry"},
		{"duplicate", header + `{"type":"message","id":"u","parentId":null,"message":{"role":"user","content":"a"}}` + "\n" +
			`{"type":"message","id":"u","parentId":null,"message":{"role":"user","content":"b"}}` + "\n", "duplicate.jsonl:3: entry id \"u\" is used twice"},
		{"bad-block", header + `{"type":"message","id":"a","parentId":null,"message":{"role":"assistant","content":[{"type":"video"}]}}` + "\n", "unknown block type \"video\""},
		{"no-call-id", header + `{"type":"message","id":"a","parentId":null,"message":{"role":"assistant","content":[{"type":"toolCall","name":"bash"}]}}` + "\n", "toolCall block without an id"},
	} {
		file := dir + "malformed.jsonl"
		if tc.name != "unknown-parent" {
			file = write(tc.name+".jsonl", tc.body)
		}
		_, err := load(t, file)
		var pe *transcript.ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want a ParseError with %q", tc.name, err, tc.want)
		}
	}
}

// TestTornLastLine: the line pi is still writing is not read, and says so.
func TestTornLastLine(t *testing.T) {
	data, err := os.ReadFile(dir + "session-v1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "torn.jsonl")
	if err := os.WriteFile(p, append(data, []byte(`{"type":"message","timestamp":"x","mess`)...), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := load(t, p)
	if err != nil || len(c.Nodes) != 7 || len(c.Warnings) != 1 {
		t.Fatalf("err %v, %d nodes, warnings %v", err, len(c.Nodes), c.Warnings)
	}
}

func TestDetect(t *testing.T) {
	for _, f := range []string{"session-tree.jsonl", "session-v1.jsonl"} {
		data, _ := os.ReadFile(dir + f)
		if !pi.Detect(data) {
			t.Errorf("%s not detected", f)
		}
	}
	for _, s := range []string{`{"type":"session_meta","payload":{}}`, `{"type":"session","id":"x"}`, `{"sessionId":"x","projectHash":"y"}`, ``, `[1]`} {
		if pi.Detect([]byte(s)) {
			t.Errorf("%q detected as a pi session", s)
		}
	}
}

func TestFind(t *testing.T) {
	home := t.TempDir()
	if got, err := pi.Find(input.Env{Home: home}); err != nil || len(got) != 0 {
		t.Fatalf("no pi folder: %v %v", got, err)
	}
	proj := filepath.Join(home, ".pi", "agent", "sessions", "--work-project--")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(dir + "session-tree.jsonl")
	file := filepath.Join(proj, "2026-01-01T00-00-00-000Z_11111111.jsonl")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "other.jsonl"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := pi.Find(input.Env{Home: home})
	if err != nil || len(got) != 1 {
		t.Fatalf("found %v, %v", got, err)
	}
	f := got[0]
	if f.File != file || f.SessionID != "11111111-2222-4333-8444-555555555555" || f.Project != "/work/project" || f.Model != "claude-sonnet-4-5" || f.Updated.Before(time.Now().Add(-time.Hour)) {
		t.Errorf("found %+v", f)
	}
	// PI_CODING_AGENT_DIR moves the agent folder, as pi's config.js reads it.
	env := input.Env{Home: t.TempDir(), Getenv: func(k string) string {
		if k == "PI_CODING_AGENT_DIR" {
			return filepath.Join(home, ".pi", "agent")
		}
		return ""
	}}
	if got, _ := pi.Find(env); len(got) != 1 {
		t.Errorf("PI_CODING_AGENT_DIR: found %d", len(got))
	}
}

func FuzzImport(f *testing.F) {
	importtest.Fuzz(f, dir, []string{"session-tree.jsonl", "session-v1.jsonl", "malformed.jsonl"}, "session.jsonl", pi.Import)
}

func TestNear(t *testing.T) {
	if got := pi.Near("", []byte(`{"type":"session","id":"x"}`)); !strings.Contains(got, `without "timestamp", "cwd"`) {
		t.Errorf("near %q", got)
	}
	for _, s := range []string{`{"type":"session","id":"x","timestamp":"t","cwd":"/"}`, `{"type":"message"}`, `[]`} {
		if got := pi.Near("", []byte(s)); got != "" {
			t.Errorf("%s: near %q", s, got)
		}
	}
}

// TestPublicSample: an excerpt of a real public pi session (version 1,
// fixtures/import/pi/README.md) imports with its two compactions, the
// results pi synthesises for the calls left open, the aborted replies
// left out, and its recorded usage.
func TestPublicSample(t *testing.T) {
	c, err := load(t, dir+"public-pi-mono-v1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var summaries, synthetic, usage int
	for _, n := range c.Nodes {
		switch {
		case strings.HasPrefix(n.ID, transcript.SummaryIDPrefix):
			summaries++
		case n.Metadata["pi_synthetic"] != nil:
			synthetic++
			if n.Content.Text != "No result provided" || string(n.Metadata["is_error"]) != "true" {
				t.Errorf("synthetic result %+v", n)
			}
		case n.Usage != nil && n.Usage.InputTokens > n.Usage.CachedInputTokens && n.Usage.CachedInputTokens > 0:
			usage++
		}
	}
	if summaries != 2 || synthetic != 2 || usage < 5 || c.Model != "claude-opus-4-5" {
		t.Errorf("%d summaries, %d synthetic results, %d usages with cache reads, model %q", summaries, synthetic, usage, c.Model)
	}
	if got := c.Counts[[2]string{"message/assistant", transcript.OutcomeSkipped}]; got != 2 {
		t.Errorf("%d aborted replies skipped, want 2", got)
	}
}
