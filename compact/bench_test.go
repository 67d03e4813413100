package compact

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/summarize"
)

// BenchmarkMakePlan: the pure plan over a 1,000-node tool-heavy view.
func BenchmarkMakePlan(b *testing.B) {
	nodes := sessiontest.Pointers(sessiontest.Generate(sessiontest.NewRand(), 150))
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
		res, err := Compact(context.Background(), Options{Dir: dir, Summarizer: summarize.Extractive{}, Estimate: estimate.Options{NoCache: true}})
		if err != nil || res.Outcome != OutcomeSucceeded {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkVerifyGate: the pre-plan verify check alone, at two sizes; the
// ns/node figure should stay flat (verify is linear).
func BenchmarkVerifyGate(b *testing.B) {
	for _, turns := range []int{200, 2000} {
		nodes := sessiontest.Generate(sessiontest.NewRand(), turns)
		dir := newSession(b, "gpt-4o", nodes)
		b.Run(fmt.Sprintf("nodes=%d", len(nodes)), func(b *testing.B) {
			g, err := dag.Open(dir, store.OpenOptions{})
			if err != nil {
				b.Fatal(err)
			}
			defer g.S.Close()
			for b.Loop() {
				if err := checkSession(context.Background(), dir, g.S); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(nodes)), "ns/node")
		})
	}
}
