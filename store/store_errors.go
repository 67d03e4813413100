package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// The store's errors: a write that failed, was refused or found the
// session busy, and a directory that is no session.

// WriteError is a write that failed on the way to disk (a full disk, a
// read-only file system, an I/O error): the input was fine, the storage was
// not. Op says which step ("write", "fsync", "truncate"; "" when the cause
// names it). Its own exit code (74) tells it from bad input.
type WriteError struct {
	File string
	Op   string
	Err  error
}

func (e *WriteError) Unwrap() error { return e.Err }

func (e *WriteError) Error() string {
	if e.Op != "" {
		return fmt.Sprintf("%s: %s: %v", e.File, e.Op, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

// ValidationError rejects a write: nothing was written.
type ValidationError struct {
	// Index is the 1-based position of the offending node in a batch (0 for
	// a single node or a non-node write).
	Index  int
	NodeID string
	Msg    string
	// File and Line locate the node in the batch file it was read from,
	// when the caller knows them (append --file sets them).
	File string
	Line int
}

func (e *ValidationError) Error() string {
	switch {
	case e.File != "" && e.Line > 0 && e.NodeID != "":
		return fmt.Sprintf("%s:%d: node %q: %s", e.File, e.Line, e.NodeID, e.Msg)
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	case e.Index > 0 && e.NodeID != "":
		return fmt.Sprintf("batch node %d (%q): %s", e.Index, e.NodeID, e.Msg)
	case e.Index > 0:
		return fmt.Sprintf("batch node %d: %s", e.Index, e.Msg)
	case e.NodeID != "":
		return fmt.Sprintf("node %q: %s", e.NodeID, e.Msg)
	}
	return e.Msg
}

// LockHolder is what a writer records in the lock file while it holds it.
type LockHolder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Since   time.Time `json:"since"`
	Command string    `json:"command,omitempty"`
}

// LockedError: another writer holds the session lock.
type LockedError struct {
	Dir      string
	LockFile string
	Holder   *LockHolder // nil when the lock file names nobody
	// Stale is true when the holder is a process on this host that no
	// longer exists.
	Stale bool
}

func (e *LockedError) Error() string {
	if e.Holder == nil {
		return fmt.Sprintf("%s: session is locked by another writer", e.Dir)
	}
	h := e.Holder
	state := "running"
	if e.Stale {
		state = "no longer running"
	}
	return fmt.Sprintf("%s: session is locked by pid %d on %s since %s (%s)", e.Dir, h.PID, h.Host, h.Since.UTC().Format(time.RFC3339), state)
}

// Hint says how to clear the lock.
func (e *LockedError) Hint() string {
	if e.Holder != nil && !e.Stale {
		return fmt.Sprintf("wait for pid %d to finish, or retry with a longer --lock-timeout", e.Holder.PID)
	}
	// The lock is a kernel flock that dies with its holder, so it is held
	// by a live process whose record is missing or out of date: one that
	// inherited the recorded holder's descriptor (a child it started), or
	// a writer that has not written its record yet.
	if e.Holder != nil {
		return fmt.Sprintf("pid %d has exited, but another process still holds the lock (a child of pid %d that inherited it, or a writer that has not recorded itself yet); retry later, or find it with 'fuser %s'", e.Holder.PID, e.Holder.PID, e.LockFile)
	}
	return fmt.Sprintf("a live process holds %s without a holder record; retry later, or find it with 'fuser %s'", e.LockFile, e.LockFile)
}

// ErrNotSession is returned when a directory holds no session.
var ErrNotSession = errors.New("not a ctxfold session (no session.json)")

// NotSessionError names the directory that is not a session.
type NotSessionError struct{ Dir string }

func (e *NotSessionError) Error() string {
	return fmt.Sprintf("%s: %v", e.Dir, ErrNotSession)
}
func (e *NotSessionError) Unwrap() error { return ErrNotSession }

// FileGivenError is a file given where a session directory is expected,
// most often a transcript that has not been imported yet.
type FileGivenError struct{ Path string }

func (e *FileGivenError) Error() string {
	return fmt.Sprintf("%s: is a file, not a session directory", e.Path)
}
func (e *FileGivenError) Unwrap() error { return ErrNotSession }

// Hint gives the import command. The read-only commands take a
// transcript file themselves (docs/LIVE.md), so the error is met by the
// commands that write, which need a session of their own.
func (e *FileGivenError) Hint() string {
	return fmt.Sprintf("commands that write need a session directory; if it is a transcript, import it first: 'ctxfold import %s -o DIR' (estimate, render, graph, verify, search, audit and compact --dry-run take the file itself)", e.Path)
}

// CacheSessionError is a write to a cache session (MarkCache) by anyone
// but the live cache: ctxfold's copy of a transcript file is rebuilt from
// the file at its next refresh, so what a command wrote there would
// answer for the file until it vanished (docs/LIVE.md, "Writing").
type CacheSessionError struct {
	Dir string
	// Command is the refused writer ("compact", "pin", …; "" if unknown).
	Command string
	// File is the transcript the cache session stands for, when the
	// caller knows it (cmd does; the store does not read the cache's
	// state).
	File string
}

func (e *CacheSessionError) Error() string {
	what := "writing"
	if e.Command != "" {
		what = e.Command
	}
	return fmt.Sprintf("%s: is a cache session (ctxfold's read-only copy of a transcript file); %s refused: it would be lost at the next refresh of the file", e.Dir, what)
}

// Hint gives the import that makes a session of one's own.
func (e *CacheSessionError) Hint() string {
	file := "FILE"
	if e.File != "" {
		file = e.File
	}
	return fmt.Sprintf("import the transcript into a directory first: 'ctxfold import %s -o DIR', then write to DIR", file)
}

// Hint suggests creating the session — unless the directory holds
// transcripts (a client's folder such as ~/.claude/projects/<project>/):
// ctxfold never suggests writing a session into a client's folder (issue
// 29); its transcripts are read file by file.
func (e *NotSessionError) Hint() string {
	if holdsTranscripts(e.Dir) {
		return fmt.Sprintf("%s holds transcripts, not a ctxfold session: give one file (estimate, render, graph, verify, search and audit take it), estimate, verify or audit the whole folder, or 'ctxfold import FILE -o DIR' into a directory of your own", e.Dir)
	}
	return fmt.Sprintf("create one with 'ctxfold init %s' or 'ctxfold import FILE -o %s'", e.Dir, e.Dir)
}

// holdsTranscripts: the directory has a *.jsonl file at its top or one
// level down (a client's project folder, or the folder of projects).
func holdsTranscripts(dir string) bool {
	for _, pattern := range []string{"*.jsonl", "*/*.jsonl"} {
		if m, _ := filepath.Glob(filepath.Join(filepath.Clean(dir), pattern)); len(m) > 0 {
			return true
		}
	}
	return false
}
