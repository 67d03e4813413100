//go:build unix

package claudecode

import (
	"context"
	"os"
	"syscall"
	"testing"
)

// BenchmarkImportFile: the importer alone (a discarding sink) on a given
// file, with the CPU time it took (user + system, getrusage): the figure
// comparable across trees on a loaded machine (docs/BENCHMARKS.md,
// "decoding transcripts"):
//
//	go run ./bench/claudecode-gen -mb 100 -o /tmp/s100.jsonl
//	CTXFOLD_BENCH_FILE=/tmp/s100.jsonl go test ./format/claudecode -run '^$' -bench ImportFile -benchtime 1x -count 3
func BenchmarkImportFile(b *testing.B) {
	path := os.Getenv("CTXFOLD_BENCH_FILE")
	if path == "" {
		b.Skip("set CTXFOLD_BENCH_FILE to a Claude Code transcript (see the comment)")
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	var before, after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	for b.Loop() {
		if err := Import(context.Background(), []string{path}, Options{}, &discardSink{}); err != nil {
			b.Fatal(err)
		}
	}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := after.Utime.Nano() - before.Utime.Nano() + after.Stime.Nano() - before.Stime.Nano()
	b.ReportMetric(float64(cpu)/1e9/float64(b.N), "cpu-s/op")
}
