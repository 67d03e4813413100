package cmd

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
)

func TestRenderDiff(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	r := cliRun(t, nil, false, "compact", dir, "--keep-tokens", "200", "--json")
	var comp struct {
		SummaryID   string   `json:"summary_id"`
		CoversIDs   []string `json:"covers_ids"`
		TokensAfter int      `json:"tokens_after"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &comp); err != nil || r.Code != 0 {
		t.Fatalf("compact: %v %s", err, r.Stdout)
	}
	rawTotal := estimateTotal(t, dir) // compacted view
	r = cliRun(t, nil, false, "render", dir, "--diff", "--json")
	var d renderDiffJSON
	if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil || r.Code != 0 {
		t.Fatalf("render --diff --json: %d %v %s", r.Code, err, r.Stdout)
	}
	if d.SummaryID != comp.SummaryID || !slices.Equal(d.FoldedIDs, comp.CoversIDs) || !d.Summarized {
		t.Errorf("diff: summary %q folding %v, want %q folding %v", d.SummaryID, d.FoldedIDs, comp.SummaryID, comp.CoversIDs)
	}
	// The figures are estimate's: the rendered total is what estimate
	// prints, the delta their difference.
	if float64(d.RenderedTokens) != rawTotal || d.RenderedTokens != comp.TokensAfter || d.DeltaTokens != d.RenderedTokens-d.RawTokens || d.DeltaTokens >= 0 {
		t.Errorf("diff tokens: raw %d rendered %d delta %d; estimate %v, compact after %d", d.RawTokens, d.RenderedTokens, d.DeltaTokens, rawTotal, comp.TokensAfter)
	}
	if len(d.RawIDs) != len(d.RenderedIDs)+len(d.FoldedIDs)-1 || d.FoldedTokens <= d.SummaryTokens {
		t.Errorf("diff: %d raw, %d rendered, %d folded (%d tok) for a %d-token summary", len(d.RawIDs), len(d.RenderedIDs), len(d.FoldedIDs), d.FoldedTokens, d.SummaryTokens)
	}
	r = cliRun(t, nil, false, "render", dir, "--diff")
	if r.Code != 0 || !strings.Contains(r.Stdout, "summary "+comp.SummaryID+" (") || !strings.Contains(r.Stdout, "stands in for 10 folded nodes") || !strings.Contains(r.Stdout, "\n  - u1\tuser\t") {
		t.Errorf("render --diff:\n%s", r.Stdout)
	}
	for _, bad := range [][]string{{"--diff", "--fit"}, {"--diff", "--raw"}, {"--diff", "--format", "ids"}} {
		if r := cliRun(t, nil, false, append([]string{"render", dir}, bad...)...); r.Code != 2 {
			t.Errorf("render %v: exit %d, want 2", bad, r.Code)
		}
	}
	// A branch without a summary: nothing folded, no delta.
	r = cliRun(t, nil, false, "render", sessiontest.CopyFixture(t, "tools"), "--diff", "--json")
	if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil || d.Summarized || len(d.FoldedIDs) != 0 || d.DeltaTokens != 0 {
		t.Errorf("raw branch: %s", r.Stdout)
	}
}
