package estimate

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
)

// Issue 30, item 5: the caches estimate keeps under a session's cache/
// (the counts, the view, the incremental sidecar) are its own files: a
// FIFO or a symlink to /dev/zero in their place is not read — the
// estimate returns at once, with what a cold run gives.
func TestHostileEstimateCaches(t *testing.T) {
	so := SessionOptions{Estimate: Options{Model: "gpt-4o"}}
	for _, kind := range []string{"fifo", "devzero"} {
		for _, name := range []string{CacheFile, ViewCacheFile, IncrementalFile} {
			t.Run(kind+"/"+name, func(t *testing.T) {
				s := measuredFixture(t, "tools", so)
				path := CachePath(s.dir, name)
				_ = os.Remove(path)
				var err error
				if kind == "fifo" {
					err = sessiontest.MakeFIFO(t, path, 0o644)
				} else {
					err = os.Symlink("/dev/zero", path)
				}
				if err != nil {
					t.Fatal(err)
				}
				done := make(chan SessionResult, 1)
				go func() { done <- Session(context.Background(), s.dir, so) }()
				select {
				case r := <-done:
					cold := so
					cold.Estimate.NoCache = true
					if w := Session(context.Background(), s.dir, cold); r.Err != nil || w.Err != nil || r.Result.Total != w.Result.Total {
						t.Fatalf("cached %+v, cold %+v", r, w)
					}
				case <-time.After(20 * time.Second):
					t.Fatal("estimate still running after 20 s")
				}
			})
		}
	}
}
