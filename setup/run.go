package setup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/ctxfold/ctxfold/osfile"
)

// Client names a client setup knows.
const (
	ClientClaudeCode = "claude-code"
	ClientCodex      = "codex"
	ClientGemini     = "gemini"
	ClientQwen       = "qwen"
)

// Run plans the changes to client's files and, unless dryRun, applies
// them, holding setup's lock on the folders of those files from the plan
// to the last write: a concurrent install and uninstall (or two installs)
// run one after the other, never interleaved, so the files are never left
// half-installed.
func Run(ctx context.Context, client string, o Options, dryRun bool) ([]*Change, error) {
	c, err := Lookup(client)
	if err != nil {
		return nil, err
	}
	paths, err := c.Files(o)
	if err != nil {
		return nil, err
	}
	unlock, err := lockFolders(ctx, paths)
	if err != nil {
		return nil, err
	}
	defer unlock()
	changes, err := c.Plan(o)
	if err != nil || dryRun {
		return changes, err
	}
	return changes, Apply(changes)
}

// lockWait bounds how long Run waits for another setup's lock.
var lockWait = 30 * time.Second

// lockFolders takes an exclusive lock on the folder of each path (the
// nearest one that exists: setup may create the rest), in a fixed order
// so two runs cannot deadlock. The lock is advisory: it orders setup runs
// against each other; a client writing its file meanwhile is caught by
// Apply's check instead. A folder that cannot be opened or locked (some
// file systems) is not waited for.
func lockFolders(ctx context.Context, paths []string) (unlock func(), err error) {
	var dirs []string
	for _, p := range paths {
		d := filepath.Dir(p)
		for {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				break
			}
			up := filepath.Dir(d)
			if up == d {
				break
			}
			d = up
		}
		if !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	slices.Sort(dirs)
	var held []*os.File
	unlock = func() {
		for _, f := range held {
			f.Close()
		}
	}
	deadline := time.Now().Add(lockWait)
	for _, d := range dirs {
		f, err := os.Open(d)
		if err != nil {
			continue // gone, or not readable: nothing to lock; Apply's checks remain
		}
		for {
			err = osfile.TryLock(f, osfile.Exclusive)
			if err == nil || !osfile.IsLockBusy(err) {
				break
			}
			if time.Now().After(deadline) {
				f.Close()
				unlock()
				return nil, &FileError{d, fmt.Errorf("another 'ctxfold setup' has held its lock on this folder for %s; try again", lockWait)}
			}
			select {
			case <-ctx.Done():
				f.Close()
				unlock()
				return nil, ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
		held = append(held, f)
	}
	return unlock, nil
}
