//go:build unix

package estimate

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
)

// An incremental run adds the counts of the nodes it measured to the
// count cache in place (the file is not copied: its inode stays), so a
// later full run counts none of them again.
func TestIncrementalExtendsCounts(t *testing.T) {
	g := newGrower(t, filepath.Join(sessiontest.FixturesDir(), "tools"))
	g.grow(len(g.lines)/2, false)
	ctx := context.Background()
	if r := Session(ctx, g.dir, SessionOptions{}); r.Err != nil || r.Path != PathFull {
		t.Fatalf("first run: %v, path %s", r.Err, r.Path)
	}
	inode := func() uint64 {
		st, err := os.Stat(CachePath(g.dir, CacheFile))
		if err != nil {
			t.Fatal(err)
		}
		return st.Sys().(*syscall.Stat_t).Ino
	}
	ino := inode()
	incremental := 0
	for g.grow(1, false) {
		r := Session(ctx, g.dir, SessionOptions{})
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		if r.Path == PathIncremental {
			incremental++
			if inode() != ino {
				t.Fatalf("after %d lines: the incremental run replaced the count cache instead of extending it", g.n)
			}
		}
		ino = inode()
	}
	if incremental < 3 {
		t.Fatalf("%d incremental runs; the test wants several", incremental)
	}
	if err := os.Remove(CachePath(g.dir, ViewCacheFile)); err != nil {
		t.Fatal(err)
	}
	before := bpeNodes.Load()
	if r := Session(ctx, g.dir, SessionOptions{}); r.Err != nil || r.Path != PathFull {
		t.Fatalf("full run: %v, path %s", r.Err, r.Path)
	}
	if n := bpeNodes.Load() - before; n != 0 {
		t.Errorf("the full run after the incremental ones counted %d nodes again", n)
	}
}
