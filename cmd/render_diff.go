package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
)

// renderDiffJSON is render --diff --json.
type renderDiffJSON struct {
	File        string   `json:"file,omitempty"`
	Session     string   `json:"session"`
	Head        string   `json:"head"`
	Model       string   `json:"model"`
	Encoding    string   `json:"encoding"`
	Summarized  bool     `json:"summarized"`
	SummaryID   string   `json:"summary_id"`
	FoldedIDs   []string `json:"folded_ids"`
	RawIDs      []string `json:"raw_ids"`
	RenderedIDs []string `json:"rendered_ids"`
	// Token figures come from estimate, over each view.
	RawTokens      int `json:"raw_tokens"`
	RenderedTokens int `json:"rendered_tokens"`
	FoldedTokens   int `json:"folded_tokens"`
	SummaryTokens  int `json:"summary_tokens"`
	DeltaTokens    int `json:"delta_tokens"`
}

// runRenderDiff prints the raw view of the branch beside the rendered one:
// which ids are folded, which summary stands in for them, and the token
// delta, every figure from estimate.View.
func runRenderDiff(ctx context.Context, opts *renderOptions, g *dag.Graph) error {
	d, err := render.BuildDiff(g, opts.Head)
	if err != nil {
		return err
	}
	est := opts.DiffEstimate
	est.Model = est.ForSession(g.S.Meta, opts.FitDefaultModel).Model
	if _, ok := estimate.LookupModel(est.Model, est.Models); !ok && est.Model != "" && est.Window <= 0 && !opts.DiffExplicitModel {
		// Like graph: a model the session names but this build does not
		// know counts with the default encoding, said on stderr.
		warnf(opts.IO.ErrOut, "unknown model %q: token counts use the default encoding", est.Model)
		est.Model = ""
	}
	est.NodeDetail, est.NoCalibrate = true, true
	raw, err := estimate.View(ctx, d.Raw, est)
	if err != nil {
		return err
	}
	rendered, err := estimate.View(ctx, d.Rendered, est)
	if err != nil {
		return err
	}
	out := renderDiffJSON{File: opts.File, Session: opts.Dir, Model: raw.Model, Encoding: raw.Encoding, Summarized: d.Summary >= 0,
		FoldedIDs: []string{}, RawIDs: d.Raw.IDs(), RenderedIDs: d.Rendered.IDs(),
		RawTokens: raw.Total, RenderedTokens: rendered.Total, DeltaTokens: rendered.Total - raw.Total}
	if d.Raw.Head >= 0 {
		out.Head = g.ID(d.Raw.Head)
	}
	folded := map[string]bool{}
	for _, i := range d.Folded {
		out.FoldedIDs = append(out.FoldedIDs, g.ID(i))
		folded[g.ID(i)] = true
	}
	tokens := map[string]int{}
	for _, nc := range raw.Nodes {
		tokens[nc.ID] = nc.Tokens
		if folded[nc.ID] {
			out.FoldedTokens += nc.Tokens
		}
	}
	if d.Summary >= 0 {
		out.SummaryID = g.ID(d.Summary)
		for _, nc := range rendered.Nodes {
			if nc.ID == out.SummaryID {
				out.SummaryTokens = nc.Tokens
			}
		}
	}
	if opts.JSON {
		return report.JSON(opts.IO.Out, out)
	}
	w := opts.IO.Out
	safe := render.TextSafe
	fmt.Fprintf(w, "raw:      %d nodes, %s tokens\n", len(out.RawIDs), report.Thousands(out.RawTokens))
	fmt.Fprintf(w, "rendered: %d nodes, %s tokens\n", len(out.RenderedIDs), report.Thousands(out.RenderedTokens))
	pct := 0.0
	if out.RawTokens > 0 {
		pct = 100 * float64(out.DeltaTokens) / float64(out.RawTokens)
	}
	sign := "+"
	if out.DeltaTokens < 0 {
		sign = "-"
	}
	fmt.Fprintf(w, "delta:    %s%s tokens (%+.1f%%)\n", sign, report.Thousands(max(out.DeltaTokens, -out.DeltaTokens)), pct)
	if !out.Summarized {
		fmt.Fprintln(w, "no summary substitutes on this branch: the rendered view is the raw one")
		return nil
	}
	fmt.Fprintf(w, "summary %s (%s tokens) stands in for %d folded nodes (%s tokens):\n",
		safe(out.SummaryID), report.Thousands(out.SummaryTokens), len(out.FoldedIDs), report.Thousands(out.FoldedTokens))
	for _, i := range d.Folded {
		n, err := g.S.Node(i)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  - %s\t%s\t%d tok\t%s\n", safe(n.ID), n.Role, tokens[n.ID], safe(preview(n.Content.PlainText(), 60)))
	}
	return nil
}

// preview is the first line of text, at most n runes.
func preview(text string, n int) string {
	text = strings.Join(strings.Fields(text), " ")
	r := []rune(text)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return text
}
