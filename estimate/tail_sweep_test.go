package estimate_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/live"
)

// TestTailSweep is an explorer for any Claude Code file, off unless
// CTXFOLD_TAIL_SWEEP=FILE: the file cut at every CTXFOLD_TAIL_STRIDE-th
// line end from line CTXFOLD_TAIL_FROM on, each cut measured from its tail
// (CTXFOLD_TAIL_MIN bytes first, default 16 KiB; one tail cache followed
// through the cuts with CTXFOLD_TAIL_KEEP=1) and whole. For example, with
// a generated long 2.1.3xx session:
//
//	go run ./bench/claudecode-gen -src testdata/interop/claude-code/2.1.332/compact/transcript/00000000-0000-4000-8000-000000000001.jsonl -mb 6 -o /tmp/c.jsonl
//	CTXFOLD_TAIL_SWEEP=/tmp/c.jsonl CTXFOLD_TAIL_STRIDE=5 CTXFOLD_TAIL_FROM=1500 go test ./estimate -run TestTailSweep -v -timeout 30m
func TestTailSweep(t *testing.T) {
	src := os.Getenv("CTXFOLD_TAIL_SWEEP")
	if src == "" {
		t.Skip("CTXFOLD_TAIL_SWEEP not set")
	}
	stride, _ := strconv.Atoi(os.Getenv("CTXFOLD_TAIL_STRIDE"))
	stride = max(stride, 1)
	minB, _ := strconv.Atoi(os.Getenv("CTXFOLD_TAIL_MIN"))
	if minB == 0 {
		minB = 16 << 10
	}
	keep := os.Getenv("CTXFOLD_TAIL_KEEP") != ""
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	ends := lineEnds(data)
	ctx := context.Background()
	fullCache := t.TempDir()
	tailCache := t.TempDir()
	file := filepath.Join(fullCache, "s.jsonl")
	n, bad, unusable := 0, 0, 0
	first, _ := strconv.Atoi(os.Getenv("CTXFOLD_TAIL_FROM"))
	for k := first; k < len(ends); k += stride {
		if err := os.WriteFile(file, data[:ends[k]], 0o600); err != nil {
			t.Fatal(err)
		}
		cache := tailCache
		if !keep {
			cache = t.TempDir()
		}
		a, err := estimate.FromTail(ctx, file, estimate.TailOptions{Live: live.Options{CacheDir: cache}, MinBytes: int64(minB)})
		if errors.Is(err, estimate.ErrTailUnusable) {
			unusable++
			continue
		}
		out, ferr := fullStatus(ctx, file, fullCache, estimate.SessionOptions{})
		if err != nil {
			if ferr == nil {
				t.Errorf("line %d: tail fails %v, full answers", k, err)
				bad++
			}
			continue
		}
		got := estimate.TailStatus(a, 0)
		start := a.Entry.Start
		a.Entry.Close()
		if ferr != nil {
			t.Errorf("line %d: full fails %v", k, ferr)
			continue
		}
		want := tailWant(out)
		n++
		if got != want || a.Compactions != out.Summaries {
			bad++
			t.Errorf("line %d byte %d (tail from %d):\n tail %+v c%d\n full %+v c%d", k, ends[k], start, got, a.Compactions, want, out.Summaries)
			if bad > 15 {
				t.FailNow()
			}
		}
	}
	t.Logf("%d compared, %d bad, %d unusable", n, bad, unusable)
}

// TestTailStartSweep is an explorer, off unless CTXFOLD_TAIL_STARTS=FILE:
// the file (its first CTXFOLD_TAIL_CUT lines when set) measured whole, then
// from tails starting at each line, from the last one back, until
// CTXFOLD_TAIL_LIMIT (default 150) tails have answered.
func TestTailStartSweep(t *testing.T) {
	src := os.Getenv("CTXFOLD_TAIL_STARTS")
	if src == "" {
		t.Skip("CTXFOLD_TAIL_STARTS not set")
	}
	cutLines, _ := strconv.Atoi(os.Getenv("CTXFOLD_TAIL_CUT"))
	limit, _ := strconv.Atoi(os.Getenv("CTXFOLD_TAIL_LIMIT"))
	if limit == 0 {
		limit = 150
	}
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	ends := lineEnds(data)
	if cutLines > 0 && cutLines < len(ends) {
		data = data[:ends[cutLines-1]]
		ends = ends[:cutLines]
	}
	ctx := context.Background()
	fullCache := t.TempDir()
	file := filepath.Join(fullCache, "s.jsonl")
	out, want := wholeStatus(t, file, fullCache, data)
	n, bad, declined := 0, 0, 0
	for k := len(ends) - 2; k >= 0; k-- {
		from := ends[k]
		a, err := estimate.FromTail(ctx, file, estimate.TailOptions{Live: live.Options{CacheDir: t.TempDir()}, MinBytes: int64(len(data) - from), MaxBytes: int64(len(data) - from)})
		if err != nil {
			declined++
			if n > 0 {
				t.Errorf("tail from line %d declined (%v) though a shorter one answered", k+1, err)
			}
			continue
		}
		got := estimate.TailStatus(a, 0)
		a.Entry.Close()
		if n++; n > limit {
			break
		}
		if got != want || a.Compactions != out.Summaries {
			bad++
			t.Errorf("tail from line %d (byte %d):\n tail %+v c%d\n full %+v c%d", k+1, from, got, a.Compactions, want, out.Summaries)
		}
	}
	t.Logf("%d starts compared, %d bad", n, bad)
}
