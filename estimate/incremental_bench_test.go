package estimate

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// BenchmarkAfterAppend: Session on a 35k-node session (bench/estimate-gen,
// tool calls and usage) right after one appended turn (user, assistant
// with usage), from each starting point: no cache at all (cold), only the
// per-node count cache (the full path), and the view stored before the
// append (incremental). Figures in docs/BENCHMARKS.md:
//
//	go test ./estimate -run '^$' -bench AfterAppend -benchtime 3x
func BenchmarkAfterAppend(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "s35k")
	if out, err := exec.Command("go", "run", "../bench/estimate-gen", "-n", "35000", "-o", dir).CombinedOutput(); err != nil {
		b.Skipf("cannot generate the bench session: %v\n%s", err, out)
	}
	ctx := context.Background()
	so := SessionOptions{Estimate: Options{Model: "claude-sonnet-4-5"}}
	appendTurn := func() {
		b.Helper()
		_, err := store.Update(ctx, dir, store.WriteOptions{}, func(tx *store.Tx) error {
			_, err := tx.Append([]transcript.Node{
				{Role: transcript.RoleUser, Content: transcript.TextContent("One more thing: run the race detector on pkg/store and fix what it finds.")},
				{Role: transcript.RoleAssistant, Content: transcript.TextContent("Ran `go test -race ./pkg/store`: one data race in the flusher, fixed by taking the lock in Close."),
					Usage: &transcript.Usage{InputTokens: 1 << 20, OutputTokens: 40}},
			}, store.AppendOptions{})
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	// The generator writes nodes.jsonl itself: a first commit through the
	// store starts its hash chain (docs/FORMAT.md §1), which the
	// incremental run needs to prove the session only grew.
	appendTurn()
	if r := Session(ctx, dir, so); r.Err != nil {
		b.Fatal(r.Err)
	}
	saved := map[string][]byte{}
	for _, name := range []string{CacheFile, ViewCacheFile, IncrementalFile} {
		data, err := os.ReadFile(CachePath(dir, name))
		if err != nil {
			b.Fatal(err)
		}
		saved[name] = data
	}
	appendTurn()
	restore := func(names ...string) {
		os.RemoveAll(filepath.Join(dir, CacheDir))
		os.Mkdir(filepath.Join(dir, CacheDir), 0o755)
		for _, n := range names {
			if err := os.WriteFile(CachePath(dir, n), saved[n], 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, bc := range []struct {
		name  string
		cache []string
		path  string
	}{
		{"cold", nil, PathFull},
		{"node-cache", []string{CacheFile}, PathFull},
		{"incremental", []string{CacheFile, ViewCacheFile, IncrementalFile}, PathIncremental},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				restore(bc.cache...)
				b.StartTimer()
				r := Session(ctx, dir, so)
				if r.Err != nil || r.Path != bc.path {
					b.Fatal(fmt.Sprintf("path %s (%s), want %s: %v", r.Path, r.Fallback, bc.path, r.Err))
				}
			}
		})
	}
}
