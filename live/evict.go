package live

// The cache's size cap (docs/LIVE.md, "The cache's size"). Every
// transcript file a command is given leaves an entry under live/ — a
// 300 MB transcript about 1.1 GB of it — so the entries are evicted,
// least recently used first, once they hold more than Options.MaxBytes.
// An entry's last use is its directory's mtime, which every Open sets.
// An entry in use is never evicted: eviction takes the entry's exclusive
// lock without waiting (entrylock.go) and passes over an entry it cannot
// lock — this process's own held entries included, since a flock belongs
// to an open file, not to the process. An evicted entry is
// first renamed aside under its lock, so a process that opened its
// directory before and waits for the lock finds it gone (Open checks the
// directory it locked is still the entry's) instead of refreshing a
// directory being deleted. A tail directory (<key>.tail, tail.go) is
// locked the same way while the status line reads it.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ctxfold/ctxfold/osfile"
	"github.com/ctxfold/ctxfold/store"
)

// DefaultMaxBytes is the cache's size cap unless configured: 2 GiB.
const DefaultMaxBytes int64 = 2 << 30

// abandoned is how old a directory an eviction renamed aside must be
// for a later prune to delete what is left of it.
const abandoned = time.Minute

// CacheEntry is one entry of the cache as Entries lists it.
type CacheEntry struct {
	// Dir is the entry's directory; File the transcript file it holds
	// ("" when its state is unreadable).
	Dir  string `json:"dir"`
	File string `json:"file"`
	// Bytes is the size of everything under Dir.
	Bytes int64 `json:"bytes"`
	// LastUse is the directory's mtime: the last Open of it.
	LastUse time.Time `json:"last_use"`
	// Tail: a status line's tail copy (<key>.tail), not a cache session.
	Tail bool `json:"tail,omitempty"`
	// InUse: another ctxfold holds the entry (Prune passed over it).
	InUse bool `json:"in_use,omitempty"`
}

// Entries lists the cache's entries, least recently used first.
func Entries(cacheDir string) ([]CacheEntry, error) {
	root := filepath.Join(cacheDir, "live")
	des, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	var out []CacheEntry
	for _, de := range des {
		if !de.IsDir() {
			continue
		}
		if strings.HasPrefix(de.Name(), ".evicted-") {
			// Left by an eviction that did not finish deleting.
			if info, err := de.Info(); err == nil && time.Since(info.ModTime()) > abandoned {
				_ = os.RemoveAll(filepath.Join(root, de.Name()))
			}
			continue
		}
		if strings.HasPrefix(de.Name(), ".") {
			continue
		}
		dir := filepath.Join(root, de.Name())
		st, err := os.Lstat(dir)
		if err != nil || !st.IsDir() {
			continue
		}
		e := CacheEntry{Dir: dir, LastUse: st.ModTime(), Tail: strings.HasSuffix(de.Name(), ".tail"), Bytes: dirBytes(dir)}
		state := "state.json"
		if e.Tail {
			state = "tail.json"
		}
		e.File = stateFile(filepath.Join(dir, state))
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].LastUse.Equal(out[j].LastUse) {
			return out[i].LastUse.Before(out[j].LastUse)
		}
		return out[i].Dir < out[j].Dir
	})
	return out, nil
}

// stateFile is the "file" a state.json or tail.json names, "" when it
// cannot be read.
func stateFile(path string) string {
	b, err := store.ReadCacheFile(path, maxStateBytes)
	if err != nil {
		return ""
	}
	var s struct {
		File string `json:"file"`
	}
	if json.Unmarshal(b, &s) != nil {
		return ""
	}
	return s.File
}

// dirBytes is the size of the regular files under dir (symlinks are not
// followed).
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// PruneResult says what a Prune removed and what it kept.
type PruneResult struct {
	Removed []CacheEntry `json:"removed"`
	// Bytes is what the cache holds after the prune.
	Bytes int64 `json:"bytes"`
	// InUse are the entries passed over because they were in use.
	InUse []CacheEntry `json:"in_use"`
}

// Prune evicts entries, least recently used first, until the cache holds
// at most maxBytes (all of them when maxBytes < 0). Entries in use are
// passed over; so is keep (the entry an Open just returned).
func Prune(cacheDir string, maxBytes int64, keep string) (*PruneResult, error) {
	entries, err := Entries(cacheDir)
	if err != nil {
		return nil, err
	}
	res := &PruneResult{Removed: []CacheEntry{}, InUse: []CacheEntry{}}
	for _, e := range entries {
		res.Bytes += e.Bytes
	}
	for _, e := range entries {
		if maxBytes >= 0 && res.Bytes <= maxBytes {
			break
		}
		if e.Dir == keep {
			continue
		}
		removed, err := evict(e)
		if err != nil {
			return res, err
		}
		if !removed {
			e.InUse = true
			res.InUse = append(res.InUse, e)
			continue
		}
		res.Bytes -= e.Bytes
		res.Removed = append(res.Removed, e)
	}
	return res, nil
}

// evict removes one entry unless it is in use (false then).
func evict(e CacheEntry) (bool, error) {
	f, err := osfile.OpenDirNoFollow(e.Dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return true, nil
		}
		return false, fmt.Errorf("cache: %w", err)
	}
	defer f.Close()
	if err := osfile.TryLock(f, osfile.Exclusive); err != nil {
		if osfile.IsLockBusy(err) {
			return false, nil
		}
		return false, fmt.Errorf("cache %s: %w", e.Dir, err)
	}
	if !sameDir(f, e.Dir) {
		// Another prune evicted it while this one waited; the path may
		// already be a new entry, which this lock does not cover.
		return true, nil
	}
	return true, removeAside(e.Dir)
}

// removeAside renames dir to a hidden name beside it, then deletes that:
// the entry's path is free (or gone) at once, whoever still holds the old
// directory open.
func removeAside(dir string) error {
	aside := filepath.Join(filepath.Dir(dir), fmt.Sprintf(".evicted-%s-%d", filepath.Base(dir), time.Now().UnixNano()))
	if err := os.Rename(dir, aside); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("cache: %w", err)
	}
	if err := os.RemoveAll(aside); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	return nil
}

// pruneMarker is touched by every prune after an appended refresh, which
// then waits pruneEvery for the next: a turn adds little to the cache,
// and the status line should not walk the cache after every one.
const (
	pruneMarker = ".pruned"
	pruneEvery  = time.Minute
)

// afterRefresh keeps the cache under its cap after an Open of the entry
// in dir: a fresh import (a new entry, or one re-imported) always prunes;
// an append prunes at most once per pruneEvery. Errors are ignored: the
// cap is kept on a later run.
func afterRefresh(cacheDir, dir, update string, maxBytes int64) {
	if maxBytes == 0 {
		maxBytes = DefaultMaxBytes
	}
	if maxBytes < 0 || update == Unchanged {
		return
	}
	marker := filepath.Join(cacheDir, "live", pruneMarker)
	if update == Appended {
		if st, err := os.Stat(marker); err == nil && time.Since(st.ModTime()) < pruneEvery {
			return
		}
	}
	if f, err := osfile.OpenNoFollow(marker, os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
		f.Close()
		touch(marker)
	}
	_, _ = Prune(cacheDir, maxBytes, dir)
}

// touch records a use of the entry in dir (its mtime: Entries' LastUse).
func touch(dir string) {
	now := time.Now()
	_ = os.Chtimes(dir, now, now)
}

// sameDir reports whether f (opened at path) is still the directory at
// path: an eviction renames an entry aside before it deletes it.
func sameDir(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Lstat(path)
	return err == nil && os.SameFile(a, b)
}
