package estimate

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
)

// The anchor carries the latest request's hidden output into the next
// request of its turn, drops the turn's at a new user message, and after
// a compaction starts from the client's prefix (docs/ESTIMATE.md, "The
// anchor").
func TestAnchorCarriesHiddenWithinTheTurn(t *testing.T) {
	reqs := []MatchedRequest{
		{Node: "a", Estimated: 1000, Measured: 11000},
		{Node: "b", Estimated: 1100, Measured: 11100, Hidden: 5000},
		{Node: "c", Estimated: 1200, Measured: 16200, Hidden: 700},
	}
	f := FitRequests(reqs)
	if f.Carried != 5700 || f.Unrecorded != 10000 || f.Slope != 1 {
		t.Fatalf("fit %+v: want carried 5700, unrecorded 10000, slope 1", f)
	}
	if got, _, _, _ := f.predictAt(1300, 0, headState{}); got != 17000 {
		t.Errorf("same turn: %d, want 11300 + 5700 carried", got)
	}
	if got, _, _, _ := f.predictAt(1300, 0, headState{UserAfterLatest: true}); got != 11300 {
		t.Errorf("new turn: %d, want 11300 (the provider drops the turn's reasoning)", got)
	}
	// Steps across a new turn: the carried reasoning is not growth the
	// slope has to explain.
	reqs = append(reqs, MatchedRequest{Node: "d", Estimated: 1400, Measured: 11400, NewTurn: true})
	if f := FitRequests(reqs); f.NextMedianError > 1e-9 || f.Unrecorded != 10000 || f.Carried != 0 {
		t.Errorf("across a new turn: %+v", f)
	}
}

func TestAnchorAfterCompactionIsThePrefix(t *testing.T) {
	reqs := []MatchedRequest{
		{Node: "a", Estimated: 100, Measured: 20100},
		{Node: "b", Estimated: 50000, Measured: 75000},
	}
	f := FitRequests(reqs)
	if f.Prefix != 20000 {
		t.Fatalf("prefix %v, want 20000 (request a's unrecorded part)", f.Prefix)
	}
	got, unrecorded, _, _ := f.predictAt(3000, 0, headState{AfterCompaction: true})
	if got != 23000 || unrecorded != 20000 {
		t.Errorf("after compaction: %d (unrecorded %v), want 23000: the prefix, never the pre-compaction 25,000", got, unrecorded)
	}
}

// predictAtCut is the calibrated total of the view the request answered
// by node id read, in the session imported from rel, as the file cut
// before that reply would give it (a summary written later is not used).
func predictAtCut(t *testing.T, rel []string, id string) (*Calibration, int64) {
	t.Helper()
	dir := importExternal(t, rel...)
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	i, ok := g.Lookup(id)
	if !ok {
		t.Fatalf("no node %s", id)
	}
	n, err := g.S.Node(i)
	if err != nil || n.Usage == nil {
		t.Fatalf("node %s: %v, no usage", id, err)
	}
	p := g.Pred(i)
	v, err := render.Build(g, g.ID(p), g.Substitute(g.Spine(p)).Summary > i)
	if err != nil {
		t.Fatal(err)
	}
	res, err := View(context.Background(), v, Options{Model: g.S.Meta.Model, RecordedWindow: RecordedWindow(g.S.Meta)})
	if err != nil || res.Calibration == nil {
		t.Fatalf("estimate: %v, calibration %v", err, res.Calibration)
	}
	return res.Calibration, n.Usage.InputTokens
}

// The shared AcidicSoil rollout's last request follows one with 11,456
// reasoning tokens: the slope-free offset was 21% low.
func TestAnchorCodexReasoningRealRollout(t *testing.T) {
	c, measured := predictAtCut(t, []string{"codex", "AcidicSoil-codex-session-view", "rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"}, "cx6b99603c-275")
	if e := math.Abs(float64(c.CalibratedTotal)-float64(measured)) / float64(measured); e > 0.02 || c.CarriedTokens < 11456 {
		t.Errorf("predicted %d (carried %d), recorded %d: %.1f%% off", c.CalibratedTotal, c.CarriedTokens, measured, 100*e)
	}
}

// The first request after Claude Code's compaction in the shared spotter
// session: anchored on the prefix, not on the request before (+36%).
// 12.5% remain: what the client adds after a compaction that the
// transcript does not show (docs/ACCURACY.md).
func TestAnchorAfterClaudeCodeCompaction(t *testing.T) {
	c, measured := predictAtCut(t, []string{"claude-code", "marot-spotter", "258c7280-ae70-4798-800f-63464d01a85d.jsonl"}, "1e530b95-af80-4a6e-a749-f397fdc1b496")
	if e := math.Abs(float64(c.CalibratedTotal)-float64(measured)) / float64(measured); e > 0.13 || c.Anchor != AnchorCompaction {
		t.Errorf("predicted %d (anchor %s), recorded %d: %.1f%% off", c.CalibratedTotal, c.Anchor, measured, 100*e)
	}
}

// The anchor is the main chain's latest request, never a sub-agent's: in
// Claude Code 2.1.328's sub-agent recording the sub-agent's request (3,749
// tokens, a node with a caller) is recorded after the main chain's
// second, and is not matched.
func TestAnchorIgnoresSubagentRequests(t *testing.T) {
	src := filepath.Join("..", "testdata", "interop", "claude-code", "2.1.328", "subagent", "transcript", "00000000-0000-4000-8000-000000000001.jsonl")
	out := filepath.Join(t.TempDir(), "s")
	if _, err := importer.Import(context.Background(), importer.Options{From: importer.Auto, Files: []string{src}, Out: out}); err != nil {
		t.Fatal(err)
	}
	g, err := dag.Open(out, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	v, err := render.Build(g, "", false)
	if err != nil {
		t.Fatal(err)
	}
	res, err := View(context.Background(), v, Options{Model: g.S.Meta.Model, NodeDetail: true})
	if err != nil || res.Calibration == nil {
		t.Fatalf("%v %v", err, res)
	}
	subagent := 0
	for i := range g.S.Len() {
		n, err := g.S.Node(i)
		if err != nil {
			t.Fatal(err)
		}
		if n.Usage != nil && n.Caller != "" {
			subagent++
			for _, h := range res.Calibration.History {
				if h.Node == n.ID {
					t.Errorf("the sub-agent's request %s anchors the calibration", n.ID)
				}
			}
		}
	}
	if subagent == 0 || res.Calibration.LatestNode == "" || res.Calibration.Measured != 5746 {
		t.Errorf("sub-agent requests %d, latest %s measured %d; want the main chain's last, 5,746", subagent, res.Calibration.LatestNode, res.Calibration.Measured)
	}
}
