package compact

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/summarize"
	"github.com/ctxfold/ctxfold/transcript"
)

// versusCase is a real transcript with a client's own compaction: the
// file, and the line that marks where the client compacted (the cut
// keeps the lines before it).
type versusCase struct {
	rel      []string
	boundary string
	// noOp, when set, is why ctxfold cannot compact the cut at all (a
	// known limit, asserted so that lifting it shows).
	noOp string
}

var versusCases = []versusCase{
	{rel: []string{"claude-code", "marot-spotter", "258c7280-ae70-4798-800f-63464d01a85d.jsonl"}, boundary: `"subtype":"compact_boundary"`},
	// The other sessions of marot/spotter's fixtures (the same commit,
	// MIT) that hold a Claude Code compaction: skipped until they are in
	// the shared folder (docs/COMPACT.md §7 names them).
	{rel: []string{"claude-code", "marot-spotter", "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"}, boundary: `"subtype":"compact_boundary"`},
	// One user request and 100k tokens of agent work before Claude Code
	// compacted mid-turn: no request for a kept tail, so ctxfold keeps it
	// from a step of the turn (docs/COMPACT.md §2).
	{rel: []string{"claude-code", "marot-spotter", "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"}, boundary: `"subtype":"compact_boundary"`},
	{rel: []string{"claude-code", "marot-spotter", "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"}, boundary: `"subtype":"compact_boundary"`},
	{rel: []string{"claude-code", "marot-spotter", "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"}, boundary: `"subtype":"compact_boundary"`},
}

// The outside measure of issue 46 (docs/COMPACT.md §7, "Against the
// client's summary"): cut each transcript before its client's compaction,
// compact the cut with ctxfold's defaults, and compare. Forward: the
// client summary's salient items (audit.Salient) that occur in the turns
// it covers, and how many of them what the model reads after ctxfold's
// compaction holds. Reverse: ctxfold's facts of the same turns the
// client's summary holds. scripts/summary-vs-client.sh runs it.
func TestSummaryVsClient(t *testing.T) {
	if os.Getenv("CTXFOLD_LONG") == "" {
		t.Skip("set CTXFOLD_LONG=1 (scripts/summary-vs-client.sh)")
	}
	for _, c := range versusCases {
		t.Run(c.rel[len(c.rel)-1], func(t *testing.T) { versus(t, c) })
	}
}

func versus(t *testing.T, c versusCase) {
	ctx := context.Background()
	src := sessiontest.External(t, c.rel...)
	clientText, coveredText, clientFacts := clientSummary(t, src)
	cut := cutBefore(t, src, c.boundary)
	dir := filepath.Join(t.TempDir(), "cut")
	if _, err := importer.Import(ctx, importer.Options{From: importer.Auto, Files: []string{cut}, Out: dir}); err != nil {
		t.Fatal(err)
	}
	res, err := Compact(ctx, opts(dir, summarize.Extractive{}, 0))
	if c.noOp != "" {
		if err != nil || res.Outcome != OutcomeNoOp || res.Reason != c.noOp {
			t.Fatalf("want the no-op %q: %v %+v", c.noOp, err, res)
		}
		t.Logf("ctxfold cannot compact this cut: %s (the client's summary: %d salient items)", res.Reason, len(audit.Salient(clientText)))
		return
	}
	if err != nil || res.Outcome != OutcomeSucceeded {
		t.Fatalf("compact: %v %+v", err, res)
	}
	view, summary := readView(t, dir)
	inCovered, forView := audit.NewMatcher(coveredText), audit.NewMatcher(view)
	var total, kept, verbatim int
	var missing []string
	for _, it := range audit.Salient(clientText) {
		if !inCovered.HasSalient(it) {
			continue
		}
		total++
		if forView.Has(audit.Fact{Kind: audit.KindPath, Text: it}) {
			verbatim++ // verbatim, or a path by its last two components
		}
		if forView.HasSalient(it) {
			kept++
		} else {
			missing = append(missing, it)
		}
	}
	_, kinds, _ := audit.Score(clientFacts, audit.NewMatcher(clientText), nil)
	var reverse []string
	for _, k := range kinds {
		if k.Total > 0 {
			reverse = append(reverse, fmt.Sprintf("%s %d/%d", k.Kind, k.Kept, k.Total))
		}
	}
	clientTok, _ := estimate.Text(estimate.O200kBase, clientText)
	oursTok, _ := estimate.Text(estimate.O200kBase, summary)
	t.Logf("client summary %d tokens, ctxfold summary %d tokens (cap %d, growth %d, ceiling %d by %s; facts not kept: %v)", clientTok, oursTok, res.SummaryCap, res.Growth(), res.SummaryCeiling, res.CeilingBasis, strings.Contains(summary, "did not fit"))
	t.Logf("client's salient items in ctxfold's view: %d of %d (%.1f%%); missing: %q", kept, total, pct(kept, total), missing)
	t.Logf("of them verbatim (no name/arity, call or fragment rule): %d (%.1f%%)", verbatim, pct(verbatim, total))
	t.Logf("ctxfold's facts in the client's summary: %s", strings.Join(reverse, ", "))
	if sv := res.Survival; sv != nil {
		t.Logf("ctxfold's own facts in its view: %d of %d (%.1f%%)", sv.Kept, sv.Total, sv.SurvivalPct)
		if sv.Kept != sv.Total {
			t.Errorf("ctxfold's compaction lost %d of its own facts", sv.Total-sv.Kept)
		}
	}
	if total == 0 || kept*100 < 95*total {
		t.Errorf("%d of %d salient items (%.1f%%), want ≥ 95%%", kept, total, pct(kept, total))
	}
	if oursTok > clientTok {
		t.Errorf("ctxfold's summary %d tokens, the client's %d", oursTok, clientTok)
	}
}

func pct(k, n int) float64 {
	if n == 0 {
		return 100
	}
	return float64(k*1000/n) / 10
}

// clientSummary imports the whole transcript: the client's summary text,
// the text of the turns it covers (and their subtrees) and their facts.
func clientSummary(t *testing.T, src string) (summary, covered string, facts []audit.Fact) {
	dir := filepath.Join(t.TempDir(), "full")
	if _, err := importer.Import(context.Background(), importer.Options{From: importer.Auto, Files: []string{src}, Out: dir}); err != nil {
		t.Fatal(err)
	}
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	s := g.ActiveSummary()
	sn, err := g.S.Node(s)
	if err != nil || s < 0 {
		t.Fatalf("no client summary: %v", err)
	}
	idx, _ := g.Covered(s)
	spawnedIdx := audit.Subtrees(g, idx)
	load := func(idx []int) []*transcript.Node {
		var out []*transcript.Node
		for _, i := range idx {
			n, err := g.S.Node(i)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, n)
		}
		return out
	}
	nodes, spawned := load(idx), load(spawnedIdx)
	var b strings.Builder
	for _, n := range append(append([]*transcript.Node(nil), nodes...), spawned...) {
		audit.ReadText(&b, n)
	}
	return sn.Content.PlainText(), b.String(), audit.Extract(nodes, spawned)
}

// cutBefore writes the lines of src before the first holding boundary to
// a temporary file, with the same name (the importer detects the client
// by content).
func cutBefore(t *testing.T, src, boundary string) string {
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(data, []byte(boundary))
	if at < 0 {
		t.Fatalf("%s: no %s", src, boundary)
	}
	start := bytes.LastIndexByte(data[:at], '\n') + 1
	out := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.WriteFile(out, data[:start], 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

// readView is what the model reads after the compaction (audit's read
// set: the summary and the kept tail) and the summary's text.
func readView(t *testing.T, dir string) (view, summary string) {
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	results, err := audit.Run(context.Background(), g, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, id := range results[0].ReadIDs {
		i, _ := g.Lookup(id)
		n, err := g.S.Node(i)
		if err != nil {
			t.Fatal(err)
		}
		audit.ReadText(&b, n)
		if id == results[0].SummaryID {
			summary = n.Content.PlainText()
		}
	}
	return b.String(), summary
}
