package compact

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/estimate"
)

// BenchmarkMakePlan: the pure plan over a 1,000-node tool-heavy view.
func BenchmarkMakePlan(b *testing.B) {
	nodes := ptrs(genSession(newRand(), 150))
	toks := make([]int, len(nodes))
	total := 0
	for i := range toks {
		toks[i] = 50 + i%300
		total += toks[i]
	}
	b.ReportMetric(float64(len(nodes)), "nodes")
	for b.Loop() {
		MakePlan(PlanInput{Nodes: nodes, Tokens: toks, Total: total, Target: total / 10})
	}
}

// BenchmarkCompactLong: the whole pipeline (estimate, plan, extractive
// summary, preview, persist) on fixtures/long, a fresh copy each time.
func BenchmarkCompactLong(b *testing.B) {
	src := filepath.Join("..", "fixtures", "long")
	for b.Loop() {
		b.StopTimer()
		dir := filepath.Join(b.TempDir(), "long")
		if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := Compact(context.Background(), Options{Dir: dir, Summarizer: Extractive{}, Estimate: estimate.Options{NoCache: true}})
		if err != nil || res.Outcome != OutcomeSucceeded {
			b.Fatal(err, res)
		}
	}
}
