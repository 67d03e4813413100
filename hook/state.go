package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/osfile"
	"github.com/ctxfold/ctxfold/store"
)

// state is what the hook remembers about one transcript between runs, in
// <cache>/hook/<key>.json (key as the live cache entry's directory name).
// Every run that reads it to change it holds <key>.json.lock (lockState),
// so concurrent hooks of one session take turns.
type state struct {
	Version int    `json:"schema_version"`
	File    string `json:"file"`
	// Pending is set when a compaction started (PreCompact, SessionStart
	// compact, PostCompact) and its record has not been audited yet;
	// Before is the summary that was active when it started ("" none), so
	// only a newer one is taken for it.
	Pending      bool      `json:"pending"`
	Before       string    `json:"before,omitempty"`
	PendingSince time.Time `json:"pending_since,omitzero"`
	// Scanned is how far the transcript was probed for a compaction no
	// hook announced (Dialect.Unannounced): the offset after the last
	// complete line read.
	Scanned int64 `json:"scanned,omitempty"`
	// Injected lists every compaction whose facts were injected: the same
	// compaction never gets them twice.
	Injected []Injection `json:"injected,omitempty"`
	// Ledger is the last fact ledger handed to the client's summariser
	// (Dialect.Ledger).
	Ledger *LedgerRun `json:"ledger,omitempty"`
}

const stateVersion = 1

// maxStateBytes bounds the state file: maxRemembered injections take a
// few tens of KB; a bigger file is not ours.
const maxStateBytes = 1 << 20

func statePath(cacheDir, abs string) string {
	return filepath.Join(cacheDir, "hook", filepath.Base(live.EntryDir(cacheDir, abs))+".json")
}

// loadState reads the state as every cache file is read (docs/LIVE.md,
// "Hostile files": a regular file only, never through a link, bounded):
// a missing one starts afresh, and so does one that cannot be ours (a
// FIFO, a link, a directory, an oversized or unreadable file), which is
// first set aside as NAME.bad so the next save can write the state.
func loadState(path, abs string) *state {
	st := &state{Version: stateVersion, File: abs}
	b, err := store.ReadCacheFile(path, maxStateBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return st
	}
	var got state
	if err != nil || json.Unmarshal(b, &got) != nil || got.Version != stateVersion {
		setAside(path)
		return st
	}
	if got.File != abs {
		return st // another transcript's (a hash collision): not set aside
	}
	return &got
}

// setAside moves what is at path out of the state's way (renaming a link
// renames the link, never what it points to).
func setAside(path string) {
	_ = os.RemoveAll(path + ".bad")
	if os.Rename(path, path+".bad") != nil {
		_ = os.RemoveAll(path)
	}
}

// lockState takes the state's lock, waiting while another hook of the
// same transcript holds it (until ctx ends). A lock file that is not a
// regular file is set aside once.
func lockState(ctx context.Context, path string) (unlock func(), err error) {
	lp := path + ".lock"
	if err := os.MkdirAll(filepath.Dir(lp), 0o700); err != nil {
		return nil, err
	}
	var f *os.File
	for try := 0; ; try++ {
		f, err = osfile.OpenNoFollow(lp, os.O_RDWR|os.O_CREATE, 0o600)
		if err == nil {
			if fi, e := f.Stat(); e != nil || !fi.Mode().IsRegular() {
				f.Close()
				f, err = nil, &fs.PathError{Op: "open", Path: lp, Err: errors.New("not a regular file")}
			}
		}
		if err == nil || try > 0 {
			break
		}
		setAside(lp)
	}
	if err != nil {
		return nil, err
	}
	for {
		err := osfile.TryLock(f, osfile.Exclusive)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !osfile.IsLockBusy(err) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", lp, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("lock %s: another hook of this session held it: %w", lp, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// find is the injection recorded for summary id (nil none).
func (st *state) find(id string) *Injection {
	for i := range st.Injected {
		if st.Injected[i].SummaryID == id {
			return &st.Injected[i]
		}
	}
	return nil
}

// forget drops the injection recorded for summary id.
func (st *state) forget(id string) {
	for i := range st.Injected {
		if st.Injected[i].SummaryID == id {
			st.Injected = append(st.Injected[:i:i], st.Injected[i+1:]...)
			return
		}
	}
}

// maxRemembered bounds the injected list: a session compacts a few times
// an hour at most.
const maxRemembered = 200

func (st *state) save(path string) error {
	if len(st.Injected) > maxRemembered {
		st.Injected = st.Injected[len(st.Injected)-maxRemembered:]
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		setAside(path)
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	return store.WriteFileAtomic(path, store.AtomicOptions{Perm: 0o600}, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}
