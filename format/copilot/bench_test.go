package copilot_test

import (
	"context"
	"os"
	"testing"

	"github.com/ctxfold/ctxfold/format/copilot"
	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/internal/importtest"
)

// BenchmarkImport reads the events.jsonl CTXFOLD_COPILOT_BENCH names (go
// run ./bench/copilot-gen -mb 100 -o FILE) into an in-memory target: the
// importer alone, without the store (docs/BENCHMARKS.md, "import").
func BenchmarkImport(b *testing.B) {
	file := os.Getenv("CTXFOLD_COPILOT_BENCH")
	if file == "" {
		b.Skip("set CTXFOLD_COPILOT_BENCH to a generated events.jsonl (bench/copilot-gen)")
	}
	st, err := os.Stat(file)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	for i := 0; i < b.N; i++ {
		var tg importtest.Target
		if err := copilot.Import(context.Background(), []string{file}, input.Options{}, &tg); err != nil {
			b.Fatal(err)
		}
	}
}
