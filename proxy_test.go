package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/store"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/render"
)

// TestClaudeProxyTracking measures which encoding tracks Claude's own
// counts best (docs/ACCURACY.md, "Which proxy for Claude"): on the real
// Claude Code transcripts with ≥ 5 recorded requests, the view each request
// read is rendered as text and counted with o200k_base, cl100k_base and the
// vocabulary of the npm package @anthropic-ai/tokenizer (through node; the
// package is never vendored), and each step's growth in recorded input is
// compared with the growth in each count. It runs only when
// CTXFOLD_CLAUDE_TOKENIZER names a node_modules directory holding that
// package; CTXFOLD_PROXY_TABLE=FILE writes the table as Markdown.
func TestClaudeProxyTracking(t *testing.T) {
	modules := os.Getenv("CTXFOLD_CLAUDE_TOKENIZER")
	if modules == "" {
		t.Skip("CTXFOLD_CLAUDE_TOKENIZER (a node_modules with @anthropic-ai/tokenizer) not set")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node")
	}
	root := sessiontest.External(t, "claude-code")
	var files []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	ctx := context.Background()
	encodings := []string{estimate.O200kBase, estimate.Cl100kBase, "claude (npm @anthropic-ai/tokenizer)"}
	var b strings.Builder
	b.WriteString("| session | requests | encoding | fitted slope Δmeasured/Δcount | residual Σ\\|Δm − s·Δc\\| / Σ\\|Δm\\| | next-request median (offset) | next-request median (offset+slope) |\n|---|---|---|---|---|---|---|\n")
	pooled := make([][2][]float64, len(encodings)) // per encoding: Δcount, Δmeasured over all sessions
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		out := filepath.Join(t.TempDir(), "s")
		rep, err := importer.Import(ctx, importer.Options{From: importer.Auto, Files: []string{f}, Out: out})
		if err != nil {
			t.Fatal(err)
		}
		dir := rep.Sessions[0].Dir
		texts, measured := requestTexts(t, ctx, dir)
		if len(texts) < 5 {
			continue
		}
		counts := make([][]int, len(encodings))
		for e, enc := range encodings[:2] {
			for _, s := range texts {
				n, err := estimate.Text(enc, s)
				if err != nil {
					t.Fatal(err)
				}
				counts[e] = append(counts[e], n)
			}
		}
		counts[2] = nodeCounts(t, node, modules, texts)
		for e, enc := range encodings {
			var reqs []estimate.MatchedRequest
			for k := range texts {
				reqs = append(reqs, estimate.MatchedRequest{Estimated: counts[e][k], Measured: measured[k]})
			}
			slope, resid := growthFit(reqs)
			for k := 1; k < len(reqs); k++ {
				pooled[e][0] = append(pooled[e][0], float64(reqs[k].Estimated-reqs[k-1].Estimated))
				pooled[e][1] = append(pooled[e][1], float64(reqs[k].Measured-reqs[k-1].Measured))
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %.3f | %.1f%% | %.2f%% | %.2f%% |\n", rel, len(reqs), enc, slope, 100*resid,
				100*nextMedian(reqs, false), 100*nextMedian(reqs, true))
		}
	}
	b.WriteString("\n| encoding (all sessions pooled) | fitted slope | residual |\n|---|---|---|\n")
	for e, enc := range encodings {
		var sxy, sxx, res, tot float64
		for i, dx := range pooled[e][0] {
			sxy += dx * pooled[e][1][i]
			sxx += dx * dx
		}
		s := sxy / sxx
		for i, dx := range pooled[e][0] {
			res += math.Abs(pooled[e][1][i] - s*dx)
			tot += math.Abs(pooled[e][1][i])
		}
		fmt.Fprintf(&b, "| %s | %.3f | %.1f%% |\n", enc, s, 100*res/tot)
	}
	t.Log("\n" + b.String())
	if p := os.Getenv("CTXFOLD_PROXY_TABLE"); p != "" {
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// requestTexts renders, for every recorded request on HEAD's spine, the
// view it read as text, with its recorded input.
func requestTexts(t *testing.T, ctx context.Context, dir string) ([]string, []int64) {
	t.Helper()
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	v, err := render.Build(g, "", false)
	if err != nil {
		t.Fatal(err)
	}
	res, err := estimate.View(ctx, v, estimate.Options{Model: g.S.Meta.Model, NodeDetail: true})
	if err != nil || res.Calibration == nil {
		return nil, nil
	}
	var texts []string
	var measured []int64
	for _, h := range res.Calibration.History {
		i, _ := g.Lookup(h.Node)
		p := g.Pred(i)
		if p < 0 {
			continue
		}
		pv, err := render.Build(g, g.ID(p), false)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := render.Write(&buf, pv, render.FormatText); err != nil {
			t.Fatal(err)
		}
		texts = append(texts, buf.String())
		measured = append(measured, h.Measured)
	}
	return texts, measured
}

func nodeCounts(t *testing.T, node, modules string, texts []string) []int {
	t.Helper()
	in := filepath.Join(t.TempDir(), "texts.json")
	data, _ := json.Marshal(texts)
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join("testdata", "claudetok", "count.js"), in)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var counts []int
	if err := json.Unmarshal(out, &counts); err != nil || len(counts) != len(texts) {
		t.Fatalf("node counts %q: %v", out, err)
	}
	return counts
}

// growthFit is the least-squares slope through the origin of Δmeasured on
// Δcount over consecutive requests, and the residual share it leaves.
func growthFit(reqs []estimate.MatchedRequest) (slope, residual float64) {
	var sxy, sxx float64
	for k := 1; k < len(reqs); k++ {
		dx := float64(reqs[k].Estimated - reqs[k-1].Estimated)
		dy := float64(reqs[k].Measured - reqs[k-1].Measured)
		sxy += dx * dy
		sxx += dx * dx
	}
	if sxx == 0 {
		return 0, 1
	}
	slope = sxy / sxx
	var res, tot float64
	for k := 1; k < len(reqs); k++ {
		dx := float64(reqs[k].Estimated - reqs[k-1].Estimated)
		dy := float64(reqs[k].Measured - reqs[k-1].Measured)
		res += math.Abs(dy - slope*dx)
		tot += math.Abs(dy)
	}
	return slope, res / tot
}

// nextMedian is the median next-request error predicting each request
// from the one before: offset only, or with the slope fitted on the steps
// before it (as calibration does).
func nextMedian(reqs []estimate.MatchedRequest, withSlope bool) float64 {
	var errs []float64
	for k := 1; k < len(reqs); k++ {
		s := 1.0
		if withSlope && k >= 3 {
			s, _ = growthFit(reqs[:k])
			s = math.Max(0.5, math.Min(3, s))
		}
		p := float64(reqs[k-1].Measured) + s*float64(reqs[k].Estimated-reqs[k-1].Estimated)
		errs = append(errs, math.Abs(p-float64(reqs[k].Measured))/float64(reqs[k].Measured))
	}
	return quantile(errs, 0.5)
}
