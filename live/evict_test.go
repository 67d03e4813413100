package live

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/osfile"
)

// Issue 44 item 2: filling the cache past its cap evicts the least
// recently used entries; an entry in use — held by this process, or
// locked by another — is never evicted.
func TestCacheEvictsPastItsCap(t *testing.T) {
	src, err := os.ReadFile("../fixtures/import/claude-code/sess-0001.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	cache, files := t.TempDir(), t.TempDir()
	ctx := context.Background()
	open := func(name string, max int64) *Entry {
		t.Helper()
		p := filepath.Join(files, name)
		if err := os.WriteFile(p, src, 0o644); err != nil {
			t.Fatal(err)
		}
		e, err := Open(ctx, p, Options{CacheDir: cache, MaxBytes: max})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	// One entry's size, then a cap of three and a half entries.
	first := open("f0.jsonl", -1)
	first.Close()
	all, err := Entries(cache)
	if err != nil || len(all) != 1 || all[0].Bytes == 0 || all[0].File != filepath.Join(files, "f0.jsonl") {
		t.Fatalf("entries %+v %v", all, err)
	}
	one := all[0].Bytes
	limit := one*7/2 + 1
	// f1 is held open while the cache fills: it is in use.
	inUse := open("f1.jsonl", limit)
	defer inUse.Close()
	for i := 2; i <= 6; i++ {
		// mtimes far enough apart to order the entries.
		time.Sleep(20 * time.Millisecond)
		open("f"+string(rune('0'+i))+".jsonl", limit).Close()
	}
	all, err = Entries(cache)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	kept := map[string]bool{}
	for _, e := range all {
		total += e.Bytes
		kept[filepath.Base(e.File)] = true
	}
	if total > limit || len(kept) != 3 || !kept["f6.jsonl"] || !kept["f5.jsonl"] || !kept["f1.jsonl"] {
		t.Fatalf("after filling past %d bytes: %d bytes, kept %v", limit, total, kept)
	}
	// The held entry still reads.
	if _, err := os.Stat(filepath.Join(inUse.Session, "session.json")); err != nil {
		t.Fatal(err)
	}

	// Locked by another process (another open file's flock): kept by a
	// prune of everything; the rest goes.
	locked := EntryDir(cache, filepath.Join(files, "f6.jsonl"))
	lf, err := osfile.OpenDirNoFollow(locked)
	if err != nil {
		t.Fatal(err)
	}
	if err := osfile.TryLock(lf, osfile.Shared); err != nil {
		t.Fatal(err)
	}
	res, err := Prune(cache, -1, "")
	if err != nil {
		t.Fatal(err)
	}
	lf.Close()
	all, _ = Entries(cache)
	if len(all) != 2 || len(res.InUse) != 2 || len(res.Removed) != 1 || filepath.Base(res.Removed[0].File) != "f5.jsonl" {
		t.Fatalf("prune all: %+v, left %+v", res, all)
	}
	// Once released, a prune of everything empties the cache, and a file
	// given again is imported afresh.
	inUse.Close()
	if res, err := Prune(cache, -1, ""); err != nil || len(res.InUse) != 0 || res.Bytes != 0 {
		t.Fatalf("prune all after release: %+v %v", res, err)
	}
	if e := open("f1.jsonl", limit); e.Update != Fresh {
		t.Fatalf("after eviction: %s", e.Update)
	} else {
		e.Close()
	}
}

// Opens racing with evictions under a cap that holds one entry: every
// Open evicts the others, yet no entry is removed while it is held —
// each Open's session reads until it is closed.
func TestCacheEvictionRacesOpens(t *testing.T) {
	src, err := os.ReadFile("../fixtures/import/claude-code/sess-0001.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	cache, files := t.TempDir(), t.TempDir()
	errs := make(chan error, 4)
	for w := 0; w < 4; w++ {
		go func(w int) {
			p := filepath.Join(files, "w"+string(rune('0'+w))+".jsonl")
			if err := os.WriteFile(p, src, 0o644); err != nil {
				errs <- err
				return
			}
			for i := 0; i < 8; i++ {
				e, err := Open(context.Background(), p, Options{CacheDir: cache, MaxBytes: 1})
				if err != nil {
					errs <- err
					return
				}
				if _, err := os.Stat(filepath.Join(e.Session, "nodes.jsonl")); err != nil {
					errs <- err
					return
				}
				e.Close()
			}
			errs <- nil
		}(w)
	}
	for w := 0; w < 4; w++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
