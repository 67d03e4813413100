package droid_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/format/droid"
	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/internal/importtest"
	"github.com/ctxfold/ctxfold/transcript"
)

const dir = "testdata/"

func load(t *testing.T, file string) *importtest.Conv {
	t.Helper()
	var tg importtest.Target
	if err := droid.Import(context.Background(), []string{file}, droid.Options{}, &tg); err != nil {
		t.Fatal(err)
	}
	if len(tg.Convs) != 1 {
		t.Fatalf("%d conversations, want 1", len(tg.Convs))
	}
	return tg.Convs[0]
}

func TestDetect(t *testing.T) {
	head, err := os.ReadFile(dir + "rewind.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if !droid.Detect(head) || !droid.Detect(head[:60]) {
		t.Error("a Droid session (whole, or cut inside its first line) is not detected")
	}
	for _, other := range []string{
		`{"type":"user","sessionId":"x","parentUuid":null,"cwd":"/w","message":{"role":"user","content":"hi"}}`,
		`{"timestamp":"2025-01-01T00:00:00Z","type":"session_meta","payload":{"id":"x","cwd":"/w"}}`,
		`{"type":"session_start","id":"x"}`,
		`[]`, ``,
	} {
		if droid.Detect([]byte(other)) {
			t.Errorf("detected %q", other)
		}
	}
}

// TestRewind: a rewound turn stays as a branch off the spine, HEAD is the
// last message written, a user_only message and bookkeeping records are
// skipped with a reason, and a message naming a skipped one as its parent
// follows the node before it.
func TestRewind(t *testing.T) {
	c := load(t, dir+"rewind.jsonl")
	want := importtest.Stats{Nodes: 8, User: 4, Assistant: 4, Calls: 1, Results: 1}
	if got := importtest.StatsOf(c.Nodes); got != want {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
	if c.Head != "a4" || c.Model != "gpt-5.6-sol" || c.Name != "0b5e0000-0000-4000-8000-000000000001" {
		t.Errorf("head %q model %q name %q", c.Head, c.Model, c.Name)
	}
	pred := map[string]string{}
	for _, n := range c.Nodes {
		pred[n.ID] = n.Predecessor
	}
	if pred["u3"] != "a2" || pred["u2"] != "a2" || pred["r1"] != "a1" {
		t.Errorf("predecessors %v: the rewound u2 and the new u3 both follow a2", pred)
	}
	a1 := c.Nodes[1]
	if b := a1.Content.Blocks; len(b) != 2 || b[0].Type != transcript.BlockThinking || b[0].Signature != "sig" || b[1].Type != transcript.BlockToolCall {
		t.Errorf("a1 blocks %+v", a1.Content.Blocks)
	}
	for _, k := range [][2]string{{"message/user", transcript.OutcomeSkipped}, {"agent_turn_outcome", transcript.OutcomeSkipped},
		{"todo_state", transcript.OutcomeSkipped}, {"some_future_record", transcript.OutcomeSkipped}, {"session_start", transcript.OutcomeMerged}} {
		if c.Counts[k] != 1 {
			t.Errorf("count %v = %d, want 1", k, c.Counts[k])
		}
	}
	for _, n := range c.Nodes {
		if n.Usage != nil {
			t.Errorf("node %s has a usage: Droid records none per request", n.ID)
		}
	}
}

// TestCompactions: each compaction_state is a summary node covering the
// messages it removed; the second folds the first in (its removedCount
// counts the first summary's message).
func TestCompactions(t *testing.T) {
	c := load(t, dir+"compacted.jsonl")
	var sums []transcript.Node
	for _, n := range c.Nodes {
		if n.IsSummary() {
			sums = append(sums, n)
		}
	}
	if len(sums) != 2 {
		t.Fatalf("%d summaries, want 2", len(sums))
	}
	if got := strings.Join(sums[0].CoversIDs(), ","); got != "context-u1,u1" {
		t.Errorf("first covers %s", got)
	}
	if got := strings.Join(sums[1].CoversIDs(), ","); got != "context-u1,u1,a1,u2" {
		t.Errorf("second covers %s", got)
	}
	if sums[0].ID != "summary_c1" || sums[0].Predecessor != "" {
		t.Errorf("first summary %s after %q", sums[0].ID, sums[0].Predecessor)
	}
	b := sums[0].Content.Blocks
	if len(b) != 2 || !strings.HasPrefix(b[0].Text, transcript.SummaryPrefix+"A previous instance of Droid") ||
		!strings.Contains(b[0].Text, "<summary>\nThe user said first.\n</summary>") || b[1].Text != "<system-reminder>info</system-reminder>" {
		t.Errorf("first summary content %+v", b)
	}
	if c.Head != "u3" {
		t.Errorf("head %q", c.Head)
	}
}

// TestCompactionAnchor: a second compaction counts from what Droid sent,
// the first summary's message first: removedCount 2 ending at its anchor
// a1 removes that message and a1, so the summary covers the first
// summary's turns and a1.
func TestCompactionAnchor(t *testing.T) {
	c := load(t, dir+"compacted-anchor.jsonl")
	var last transcript.Node
	for _, n := range c.Nodes {
		if n.IsSummary() {
			last = n
		}
	}
	if got := strings.Join(last.CoversIDs(), ","); got != "context-u1,u1,a1" {
		t.Errorf("second summary covers %s, want the first summary's turns and a1", got)
	}
}

func TestErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		data string
		line int
		msg  string
	}{
		"no start":   {`{"type":"message","id":"u1","message":{"role":"user","content":"hi"}}`, 1, "session_start"},
		"empty":      {"", 1, "empty file"},
		"bad json":   {`{"type":"session_start","id":"s","cwd":"/"}` + "\n{\"type\":\"message\"\n", 2, ""},
		"role":       {`{"type":"session_start","id":"s","cwd":"/"}` + "\n" + `{"type":"message","id":"m","message":{"role":"system","content":"x"}}`, 2, "role must be user or assistant"},
		"no message": {`{"type":"session_start","id":"s","cwd":"/"}` + "\n" + `{"type":"message","id":"m"}`, 2, `without a "message"`},
		"count":      {`{"type":"session_start","id":"s","cwd":"/"}` + "\n" + `{"type":"compaction_state","id":"c"}`, 2, "removedCount"},
		"second":     {`{"type":"session_start","id":"s","cwd":"/"}` + "\n" + `{"type":"session_start","id":"s","cwd":"/"}`, 2, "second session_start"},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			os.WriteFile(path, []byte(tc.data), 0o644)
			err := droid.Import(context.Background(), []string{path}, droid.Options{}, &importtest.Target{})
			var pe *transcript.ParseError
			if !errors.As(err, &pe) || pe.Line != tc.line || pe.File != path || !strings.Contains(pe.Msg, tc.msg) {
				t.Errorf("error %v, want a parse error at %s:%d saying %q", err, path, tc.line, tc.msg)
			}
		})
	}
}

func TestLineLimit(t *testing.T) {
	var tg importtest.Target
	err := droid.Import(context.Background(), []string{dir + "rewind.jsonl"}, droid.Options{MaxLineBytes: 100}, &tg)
	var pe *transcript.ParseError
	if !errors.As(err, &pe) || !strings.Contains(pe.Msg, "limit") {
		t.Errorf("error %v, want the line limit", err)
	}
}

func TestFind(t *testing.T) {
	home := t.TempDir()
	if got, err := droid.Find(input.Env{Home: home}); err != nil || len(got) != 0 {
		t.Fatalf("no sessions folder: %v, %v", got, err)
	}
	proj := filepath.Join(home, ".factory", "sessions", "-work-app")
	os.MkdirAll(proj, 0o755)
	data, _ := os.ReadFile(dir + "rewind.jsonl")
	older := filepath.Join(proj, "0b5e0000-0000-4000-8000-000000000001.jsonl")
	newer := filepath.Join(proj, "0b5e0000-0000-4000-8000-000000000002.jsonl")
	os.WriteFile(older, data, 0o644)
	compacted, _ := os.ReadFile(dir + "compacted.jsonl")
	os.WriteFile(newer, compacted, 0o644)
	os.WriteFile(filepath.Join(proj, "0b5e0000-0000-4000-8000-000000000002.settings.json"), []byte(`{"model":"custom:Fake-0"}`), 0o644)
	os.WriteFile(filepath.Join(proj, "notes.jsonl"), []byte(`{"type":"other"}`+"\n"), 0o644)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(older, old, old)
	got, err := droid.Find(input.Env{Home: home})
	if err != nil || len(got) != 2 {
		t.Fatalf("found %+v, %v; want the 2 sessions", got, err)
	}
	if got[0].File != newer || got[0].Model != "custom:Fake-0" || got[0].Project != "/work/app" || got[0].SessionID != "0b5e0000-0000-4000-8000-000000000002" || got[1].File != older {
		t.Errorf("found %+v", got)
	}
	env := input.Env{Home: t.TempDir(), Getenv: func(k string) string {
		if k == "FACTORY_HOME_OVERRIDE" {
			return home
		}
		return ""
	}}
	if got, _ := droid.Find(env); len(got) != 2 {
		t.Errorf("FACTORY_HOME_OVERRIDE: found %d sessions, want 2", len(got))
	}
}

func FuzzImport(f *testing.F) {
	importtest.Fuzz(f, dir, []string{"rewind.jsonl", "compacted.jsonl"}, "session.jsonl", droid.Import)
}

func TestNear(t *testing.T) {
	d := t.TempDir()
	settings := filepath.Join(d, "s.settings.json")
	head := []byte(`{"assistantActiveTimeMs":2088,"model":"custom:Fake-0","autonomyMode":"auto-low","tokenUsage":{"inputTokens":9160}}`)
	os.WriteFile(filepath.Join(d, "s.jsonl"), nil, 0o644)
	if got := droid.Near(settings, head); !strings.Contains(got, filepath.Join(d, "s.jsonl")) {
		t.Errorf("Near on the settings file: %q, want the session beside it named", got)
	}
	if got := droid.Near("x.json", []byte(`{"tokenUsage":{}}`)); got != "" {
		t.Errorf("Near on another JSON: %q", got)
	}
}
