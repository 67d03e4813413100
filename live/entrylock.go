package live

// The entry lock (docs/LIVE.md, "Readers and the rewind"). A refresh may
// cut the cache session back (store.RewindCache) or replace it, so a
// reader must not read it meanwhile: Open refreshes under an exclusive
// flock of the entry directory and then holds a shared one until the
// Entry is closed, so a refresh by another process waits for the readers
// of the session it would change and every reader sees one commit. The
// lock is taken on the entry directory itself, not on a file in it: a
// file named lock that is a directory, a FIFO or a symlink cannot stall
// or misdirect it.
//
// flock locks belong to an open file, so two Opens of one entry in one
// process would block each other (estimate FILE FILE): while an Entry of
// this process holds the entry, another Open of it returns the same commit
// without refreshing (held), and Opens of one entry in this process take
// turns (a mutex per entry).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/ctxfold/ctxfold/osfile"
)

// held is this process's shared hold of an entry: the open directory,
// the Entry it returned, and how many Entries hold it.
type held struct {
	f     *os.File
	entry Entry
	users int
}

var (
	heldMu  sync.Mutex // guards heldBy and opening
	heldBy  = map[string]*held{}
	opening = map[string]*sync.Mutex{}
)

// entryMutex serialises this process's Opens of the entry in dir.
func entryMutex(dir string) *sync.Mutex {
	heldMu.Lock()
	defer heldMu.Unlock()
	m := opening[dir]
	if m == nil {
		m = &sync.Mutex{}
		opening[dir] = m
	}
	return m
}

// heldEntry is a copy of the Entry this process holds for dir, nil when
// it holds none.
func heldEntry(dir string) *Entry {
	heldMu.Lock()
	defer heldMu.Unlock()
	h := heldBy[dir]
	if h == nil {
		return nil
	}
	h.users++
	e := h.entry
	e.release = releaseOnce(dir, h)
	return &e
}

// lockEntry opens the entry directory and locks it exclusively (bounded
// by timeout, polled so that ctx ends the wait).
func lockEntry(ctx context.Context, dir string, timeout time.Duration) (*os.File, error) {
	f, err := osfile.OpenDirNoFollow(dir)
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	if err := flockWait(ctx, f, osfile.Exclusive, orDefault(timeout)); err != nil {
		f.Close()
		return nil, fmt.Errorf("cache %s is being refreshed or read by another ctxfold (waited %s): %w", dir, orDefault(timeout), err)
	}
	return f, nil
}

// shareEntry turns the exclusive lock into a shared one, held until every
// Entry of it is closed. flock converts by releasing first, so another
// process's refresh may run in between: the session is then that
// refresh's commit, as consistent as this one's.
func shareEntry(ctx context.Context, dir string, f *os.File, e *Entry, timeout time.Duration) error {
	if err := flockWait(ctx, f, osfile.Shared, orDefault(timeout)); err != nil {
		f.Close()
		return fmt.Errorf("cache %s: %w", dir, err)
	}
	h := &held{f: f, entry: *e, users: 1}
	heldMu.Lock()
	heldBy[dir] = h
	heldMu.Unlock()
	e.release = releaseOnce(dir, h)
	return nil
}

// releaseOnce drops one Entry's hold; the last one closes the directory,
// which releases the lock.
func releaseOnce(dir string, h *held) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			heldMu.Lock()
			defer heldMu.Unlock()
			h.users--
			if h.users == 0 {
				delete(heldBy, dir)
				h.f.Close()
			}
		})
	}
}

func orDefault(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		return 10 * time.Second
	}
	return timeout
}

// flockWait takes kind (exclusive or shared) on f, polling until timeout
// or ctx ends.
func flockWait(ctx context.Context, f *os.File, kind osfile.LockKind, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := osfile.TryLock(f, kind)
		if err == nil {
			return nil
		}
		if !osfile.IsLockBusy(err) {
			return err
		}
		if time.Now().After(deadline) {
			return errors.New("timed out")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// lockLiveEntry creates the entry directory and locks it (lockEntry),
// again should an eviction have renamed it aside meanwhile (evict.go).
func lockLiveEntry(ctx context.Context, dir string, timeout time.Duration) (*os.File, error) {
	for try := 0; ; try++ {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("cache: %w", err)
		}
		f, err := lockEntry(ctx, dir, timeout)
		if errors.Is(err, os.ErrNotExist) && try < 3 {
			// An eviction renamed it aside between the MkdirAll and the
			// open (TestCacheEvictionRacesOpens): make it again.
			continue
		}
		if err != nil || sameDir(f, dir) {
			return f, err
		}
		f.Close()
		if try == 3 {
			return nil, fmt.Errorf("cache %s: evicted while it was opened, again and again", dir)
		}
	}
}
