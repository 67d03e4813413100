package hook

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/store"
)

// state is what the hook remembers about one transcript between runs, in
// <cache>/hook/<key>.json (key as the live cache entry's directory name).
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
	// Injected lists every compaction whose facts were injected: the same
	// compaction never gets them twice.
	Injected []Injection `json:"injected,omitempty"`
}

const stateVersion = 1

func statePath(cacheDir, abs string) string {
	return filepath.Join(cacheDir, "hook", filepath.Base(live.EntryDir(cacheDir, abs))+".json")
}

// loadState reads the state; a missing or unreadable one starts afresh
// (the worst case is one more injection of a compaction's facts).
func loadState(path, abs string) *state {
	st := &state{Version: stateVersion, File: abs}
	b, err := os.ReadFile(path)
	if err != nil {
		return st
	}
	var got state
	if json.Unmarshal(b, &got) != nil || got.Version != stateVersion || got.File != abs {
		return st
	}
	return &got
}

func (st *state) injected(id string) bool {
	for _, in := range st.Injected {
		if in.SummaryID == id {
			return true
		}
	}
	return false
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
		return &fs.PathError{Op: "write", Path: path, Err: errors.New("not a regular file")}
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
