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

// BenchmarkResumeState: what every refresh from a resume point pays for
// the saved planner state of a large session, whatever the new turn: the
// state decoded and checked, restored into a planner, and saved again
// from it, as the refresh's saver does (runRefresh; here at the point
// itself, so no line is planned) (docs/BENCHMARKS.md, "step 3: the
// refresh after one turn"):
//
//	CTXFOLD_BENCH_FILE=/tmp/s100.jsonl go test ./format/claudecode -run '^$' -bench ResumeState -benchtime 40x -count 3
func BenchmarkResumeState(b *testing.B) {
	path := os.Getenv("CTXFOLD_BENCH_FILE")
	if path == "" {
		b.Skip("set CTXFOLD_BENCH_FILE to a Claude Code transcript (see BenchmarkImportFile)")
	}
	defer func(v bool) { checkBaseRelative = v }(checkBaseRelative)
	checkBaseRelative = false
	res := &Resume{}
	if err := Import(context.Background(), []string{path}, Options{Resume: res}, &memTarget{}); err != nil || res.Point == nil {
		b.Fatalf("no resume point: %v", err)
	}
	b.SetBytes(int64(len(res.Point.State)))
	b.ReportAllocs()
	for b.Loop() {
		s, err := decodeSnap(res.Point.State)
		if err != nil {
			b.Fatal(err)
		}
		p := newPlanner(context.Background(), discard{}, Options{Resume: &Resume{}}, nil)
		p.restore(s)
		pt, err := p.stateAt(path, s, cand{s.Rest.Off, len(s.ID)})
		p.close()
		if err != nil || pt.Offset != s.Rest.Off {
			b.Fatal(err)
		}
	}
}
