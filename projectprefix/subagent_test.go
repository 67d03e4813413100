package projectprefix_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/projectprefix"
)

// subRecording is the sub-agent file of a real Claude Code 2.1.328 session
// (testdata/interop): its first request is recorded; its parent's Agent
// call (general-purpose, no model) has its first message as prompt.
var (
	subParent    = filepath.Join("..", "testdata", "interop", "claude-code", "2.1.328", "subagent", "transcript", "00000000-0000-4000-8000-000000000001.jsonl")
	subRecording = filepath.Join(strings.TrimSuffix(subParent, ".jsonl"), "subagents", "agent-a0000000000000001.jsonl")
)

// subProject is a Claude Code project folder with an earlier session s1
// whose sub-agents are of two kinds, and a session s2 whose sub-agent has
// not replied yet.
type subProject struct {
	dir, older, newer, fresh string
}

// newSubProject writes the project: in s1, an older sub-agent of olderMeta
// whose first request read 5,000 more than the recording's, and a newer
// one of newerMeta that read 9,000 more; in s2, the recording's sub-agent
// cut before its first reply, with freshMeta ("" for none: its parent, the
// recording's session, says).
func newSubProject(t *testing.T, olderMeta, newerMeta, freshMeta string) subProject {
	t.Helper()
	b, err := os.ReadFile(subRecording)
	if err != nil {
		t.Fatal(err)
	}
	parent, err := os.ReadFile(subParent)
	if err != nil {
		t.Fatal(err)
	}
	p := subProject{dir: t.TempDir()}
	write := func(path, content, meta string, age time.Duration) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		sessiontest.WriteAged(t, path, content, age)
		if meta != "" {
			sessiontest.WriteAged(t, strings.TrimSuffix(path, ".jsonl")+".meta.json", meta, age)
		}
	}
	more := func(n string) string {
		return strings.Replace(string(b), `"input_tokens":`, `"input_tokens":`+n, 1)
	}
	p.older = filepath.Join(p.dir, "s1", "subagents", "agent-a1.jsonl")
	p.newer = filepath.Join(p.dir, "s1", "subagents", "agent-a2.jsonl")
	p.fresh = filepath.Join(p.dir, "s2", "subagents", "agent-a3.jsonl")
	write(filepath.Join(p.dir, "s1.jsonl"), string(parent), "", -3*time.Hour)
	write(filepath.Join(p.dir, "s2.jsonl"), string(parent), "", 0)
	write(p.older, more("5000"), olderMeta, -2*time.Hour)
	write(p.newer, more("9000"), newerMeta, -time.Hour)
	write(p.fresh, sessiontest.HeadBefore(string(b), `"type":"assistant"`), freshMeta, 0)
	return p
}

// A sub-agent that has not replied takes what the first request of the
// project's newest earlier sub-agent of its own kind carried beside its
// transcript — not the newer one of another kind, not the prior — whether
// its kind comes from its .meta.json or from its parent's call.
func TestSubagentTakesTheProjectsSubagentOfItsKind(t *testing.T) {
	for _, c := range []struct {
		name, older, newer, fresh, kind string
	}{
		{"meta", `{"agentType":"general-purpose","model":"sonnet"}`, `{"agentType":"Explore"}`, `{"agentType":"general-purpose","model":"sonnet"}`, "general-purpose/sonnet"},
		{"parent's call", `{"agentType":"general-purpose"}`, `{"agentType":"general-purpose","model":"haiku"}`, "", "general-purpose/"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newSubProject(t, c.older, c.newer, c.fresh)
			want, newer := firstUnrecorded(t, p.older), firstUnrecorded(t, p.newer)
			if want == newer {
				t.Fatalf("both sub-agents carried %d: the test cannot tell them apart", want)
			}
			target, so, r := measure(t, p.fresh)
			if r.Calibration == nil || r.Calibration.Anchor != estimate.MethodPrior {
				t.Fatalf("before: %+v, want the client's prior", r.Calibration)
			}
			if !projectprefix.Apply(context.Background(), target, r, projectprefix.Options{Session: so}) {
				t.Fatal("the project's earlier sub-agent was not taken")
			}
			c0 := r.Calibration
			if c0.CalibratedTotal != r.Total+want || c0.Anchor != estimate.MethodProject || !strings.Contains(c0.Method, c.kind+" sub-agent agent-a1.jsonl") {
				t.Errorf("calibration %+v, want %d + %d from the %s sub-agent agent-a1.jsonl", c0, r.Total, want, c.kind)
			}
		})
	}
}

// A sub-agent whose kind is unknown and one whose project has no
// sub-agent of its kind keep the prior (a fork takes its parent's
// context: TestForkTakesItsParentsContext).
func TestSubagentWithoutItsKindKeepsThePrior(t *testing.T) {
	gp := `{"agentType":"general-purpose"}`
	for _, c := range []struct{ name, older, newer, fresh string }{
		{"no sub-agent of its kind", `{"agentType":"Explore"}`, `{"agentType":"Plan"}`, gp},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newSubProject(t, c.older, c.newer, c.fresh)
			target, so, _ := measure(t, p.fresh)
			if l, ok := projectprefix.Find(context.Background(), target, projectprefix.Options{Session: so}); ok {
				t.Errorf("took %+v", l)
			}
		})
	}
	t.Run("unknown kind", func(t *testing.T) {
		p := newSubProject(t, gp, gp, "")
		if err := os.Remove(filepath.Join(p.dir, "s2.jsonl")); err != nil {
			t.Fatal(err)
		}
		target, so, _ := measure(t, p.fresh)
		if l, ok := projectprefix.Find(context.Background(), target, projectprefix.Options{Session: so}); ok {
			t.Errorf("took %+v with neither a .meta.json nor a parent", l)
		}
	})
}

// A fork starts from its parent's whole context: its first request takes
// what the parent's latest main-chain request before the fork read and
// wrote — not a later one, not a sub-agent's.
func TestForkTakesItsParentsContext(t *testing.T) {
	dir := t.TempDir()
	const cwd = `"cwd":"/w"`
	line := func(at string, sidechain bool, in, cached, out int) string {
		return fmt.Sprintf(`{"type":"assistant","isSidechain":%v,"timestamp":"%s",%s,"uuid":"a%s","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":%d}}}`,
			sidechain, at, cwd, at, in, cached, out) + "\n"
	}
	parent := `{"type":"user","timestamp":"2026-07-29T08:00:00.000Z",` + cwd + `,"uuid":"u1","message":{"role":"user","content":"go"}}` + "\n" +
		line("2026-07-29T08:10:00.000Z", false, 10, 100000, 50) +
		line("2026-07-29T08:20:00.000Z", false, 20, 200000, 700) +
		line("2026-07-29T08:25:00.000Z", true, 5, 999000, 9) +
		line("2026-07-29T09:00:00.000Z", false, 30, 300000, 80)
	sessiontest.WriteAged(t, filepath.Join(dir, "s1.jsonl"), parent, 0)
	fork := filepath.Join(dir, "s1", "subagents", "agent-afork-1.jsonl")
	if err := os.MkdirAll(filepath.Dir(fork), 0o755); err != nil {
		t.Fatal(err)
	}
	sessiontest.WriteAged(t, fork, `{"parentUuid":null,"isSidechain":true,"agentId":"afork-1","type":"user","message":{"role":"user","content":"Check the build once more."},"uuid":"f1","timestamp":"2026-07-29T08:30:00.000Z","userType":"external",`+cwd+`,"sessionId":"s1","version":"2.1.220"}`+"\n", 0)
	for _, c := range []struct {
		meta string
		want int
	}{
		{`{"agentType":"fork","isFork":true,"description":"check"}`, 20 + 200000 + 700},
		{`{"agentType":"general-purpose"}`, 0},
	} {
		sessiontest.WriteAged(t, strings.TrimSuffix(fork, ".jsonl")+".meta.json", c.meta, 0)
		target, so, _ := measure(t, fork)
		l, ok := projectprefix.Find(context.Background(), target, projectprefix.Options{Session: so})
		if c.want == 0 {
			if ok {
				t.Errorf("%s: took %+v", c.meta, l)
			}
			continue
		}
		if !ok || l.Tokens != c.want || !strings.Contains(l.Method(), "a fork of session s1.jsonl") {
			t.Errorf("%s: %+v %v (%s), want %d from s1.jsonl", c.meta, l, ok, l.Method(), c.want)
		}
	}
}
