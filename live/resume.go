package live

// The incremental refresh of a Claude Code file or a Codex rollout
// (docs/LIVE.md, "The resume point"): the cache entry keeps the resume
// point of the last import (input.Resume) in resume.bin and, in state.json, its offset and
// the session's meta at the commit made right after the nodes planned
// before it. A grown file with an intact prefix is refreshed by cutting
// the cache session back to that commit (store.RewindCache) and
// importing only the bytes from the point on.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/store"
)

// resumeFile holds the planner state of the entry's resume point.
const resumeFile = "resume.bin"

// resumeState is what state.json says of the resume point.
type resumeState struct {
	// Offset is the line start of the file the point is at; Nodes how
	// many nodes were planned before it.
	Offset int64 `json:"offset"`
	Nodes  int   `json:"nodes"`
	// StateXXH64 is the hash of resume.bin, so a state file left by an
	// interrupted refresh is never taken for this one's. XXH64 for the
	// prefix's reason (prefixhash.go): resume.bin is ctxfold's own file,
	// read and written whole at every refresh (5 MB for a 100 MB session),
	// and the check is against a stale or torn one, not a crafted one.
	StateXXH64 string `json:"state_xxh64"`
	// Checkpoint is the cache session's meta right after the commit that
	// ended with the Nodes nodes.
	Checkpoint store.Meta `json:"checkpoint"`
}

// sidecar is a sub-agent file that may lie beside a Claude Code session,
// with its size and hash when the cache consumed it.
type sidecar struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// sidecarsOf lists the files the Claude Code importer may read beside the
// session file abs (agent-*.jsonl in its directory, <session>/subagents/
// agent-*.jsonl), hashed: a change in one of them alone must be noticed.
// The ones of other sessions in the same directory are listed too (the
// importer keeps only its own by their sessionId); a change in them costs
// a whole re-import, never a missed one.
//
// A SQLite store's sidecar is its write-ahead log: a commit may change
// only the -wal file, never the database until a checkpoint.
func sidecarsOf(abs string, db bool) ([]sidecar, error) {
	var paths []string
	if db {
		paths = []string{abs + "-wal"}
	} else {
		dir := filepath.Dir(abs)
		a, _ := filepath.Glob(filepath.Join(dir, "agent-*.jsonl"))
		b, _ := filepath.Glob(filepath.Join(dir, strings.TrimSuffix(filepath.Base(abs), ".jsonl"), "subagents", "agent-*.jsonl"))
		paths = append(a, b...)
		sort.Strings(paths)
	}
	var out []sidecar
	for _, p := range paths {
		if p == abs || !regularNoLink(p) {
			// What the importer skips too (claudecode.discover): a
			// symlink, a FIFO or a device is no sub-agent file.
			continue
		}
		sum, size, err := hashWhole(p)
		if err != nil {
			return nil, err
		}
		out = append(out, sidecar{p, size, sum})
	}
	return out, nil
}

// carsOf is sidecarsOf and, with an old state, the files the last import
// read beside the session (withAttached: a Droid session's parents): a
// change in one of them alone must be noticed too.
func carsOf(abs string, db bool, old state, haveOld bool) ([]sidecar, error) {
	cars, err := sidecarsOf(abs, db)
	if err != nil || !haveOld {
		return cars, err
	}
	return withAttached(cars, pathsOf(old.Sidecars))
}

// withAttached adds to cars the files an import reported reading into the
// session beside it (transcript.FileReporter: a Droid session's parent
// chain, the files its manual compactions continued from), hashed, so a
// change in one alone refreshes the entry as a sub-agent file's does. One
// already listed, gone, or not a regular file is left out: gone, its old
// entry is missed and the session re-imported (sidecarChange). A file
// first reported by an import is hashed after it: what it gained in
// between is taken as consumed, a window of one refresh.
func withAttached(cars []sidecar, paths []string) ([]sidecar, error) {
	have := make(map[string]bool, len(cars))
	for _, c := range cars {
		have[c.Path] = true
	}
	for _, p := range paths {
		if have[p] || !filepath.IsAbs(p) || !regularNoLink(p) {
			continue
		}
		have[p] = true
		sum, size, err := hashWhole(p)
		if err != nil {
			return nil, err
		}
		cars = append(cars, sidecar{p, size, sum})
	}
	return cars, nil
}

func pathsOf(cars []sidecar) []string {
	out := make([]string, len(cars))
	for i, c := range cars {
		out[i] = c.Path
	}
	return out
}

// regularNoLink: path is a regular file, not a symlink to one.
func regularNoLink(path string) bool {
	st, err := os.Lstat(path)
	return err == nil && st.Mode().IsRegular()
}

func hashWhole(path string) (string, int64, error) {
	f, err := openInput(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// sidecarChange compares the sub-agent files now with the ones consumed:
// "" when they are the same, Appended when the old ones only grew (their
// consumed bytes hash the same) or new ones appeared, Fresh when one was
// rewritten, truncated or removed.
func sidecarChange(old, now []sidecar) string {
	byPath := make(map[string]sidecar, len(now))
	for _, c := range now {
		byPath[c.Path] = c
	}
	change := ""
	if len(now) != len(old) {
		change = Appended
	}
	for _, o := range old {
		c, ok := byPath[o.Path]
		switch {
		case !ok || c.Size < o.Size:
			return Fresh
		case c == o:
			continue
		case c.Size == o.Size:
			return Fresh
		}
		if sum, err := prefixSum(o.Path, o.Size); err != nil || sum != o.SHA256 {
			return Fresh
		}
		change = Appended
	}
	return change
}

func prefixSum(path string, n int64) (string, error) {
	f, err := openInput(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyN(h, f, n); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// resumeImport refreshes the cache session of a grown Claude Code file
// from the saved resume point. input.ErrCannotResume (or a refused
// rewind, wrapped in it) means the caller imports afresh.
func resumeImport(ctx context.Context, e *Entry, dir string, old state, opts Options) (*importer.Report, *input.Resume, error) {
	if opts.ResumeGC != nil {
		defer opts.ResumeGC()()
	}
	// The state grows with the nodes, never past the bytes they came from.
	b, err := store.ReadCacheFile(filepath.Join(dir, resumeFile), maxStateBytes+old.Consumed)
	if err != nil || stateHash(b) != old.Resume.StateXXH64 {
		return nil, nil, fmt.Errorf("%w: %s is missing or not the one state.json names", input.ErrCannotResume, resumeFile)
	}
	// A crash from here on leaves no state that vouches for the session.
	_ = os.Remove(filepath.Join(dir, "state.json"))
	// The session is cut back to the resume point's commit in the import's
	// own transaction, which runs beside the planner's restore.
	res := &input.Resume{State: b, Limit: e.Consumed}
	// resume.bin is written while the import emits and commits its last
	// nodes: no state.json names it until the refresh has succeeded.
	ahead := &stateWrite{}
	res.Saved = func(p *input.Point) { ahead.start(dir, p) }
	cut := old.Resume.Checkpoint
	rep, err := importer.Import(ctx, importer.Options{From: old.Format, Files: []string{e.File}, Out: e.Session,
		Append: true, Store: opts.Store, Input: opts.Input, Resume: res, RewindTo: &cut})
	if err != nil {
		_ = ahead.wait() // nothing is left writing when the file is imported afresh
		return nil, nil, err
	}
	e.ahead = ahead
	return rep, res, nil
}

// stateWrite is resume.bin written on a goroutine of its own
// (input.Resume.Saved).
type stateWrite struct {
	p    *input.Point
	done chan error
	err  error
}

func (w *stateWrite) start(dir string, p *input.Point) {
	w.p, w.done = p, make(chan error, 1)
	go func() { w.done <- writeAtomic(dir, resumeFile, p.State, false) }()
}

// wait returns the write's error once it is done (nil when none was
// started); it may be called again.
func (w *stateWrite) wait() error {
	if w == nil || w.done == nil {
		return nil
	}
	if err, ok := <-w.done; ok {
		w.err = err
		close(w.done)
	}
	return w.err
}

// saveResume writes the import's resume point into the entry (nil when
// it has none that the next refresh may use) before state.json names it.
func saveResume(dir string, rep *importer.Report, res *input.Resume, consumed int64, ahead *stateWrite) (*resumeState, error) {
	aheadErr := ahead.wait()
	if res == nil || res.Point == nil || len(rep.Sessions) != 1 || rep.Sessions[0].Checkpoint == nil {
		return nil, nil
	}
	p := res.Point
	if p.Offset > consumed {
		// The file grew while it was imported: the bytes past the hashed
		// prefix were read, but the next refresh could not vouch for them.
		return nil, nil
	}
	// Not synced: state.json, synced after it, names its hash, so a
	// resume.bin a crash left short or stale is never used. Written here
	// unless the import's point was written ahead (stateWrite) or is the
	// one the refresh read (the point did not move: resume.bin holds it).
	writtenAhead := ahead != nil && ahead.p == p && aheadErr == nil
	if !writtenAhead && !bytes.Equal(p.State, res.State) {
		if err := writeAtomic(dir, resumeFile, p.State, false); err != nil {
			return nil, err
		}
	}
	return &resumeState{Offset: p.Offset, Nodes: p.Nodes, StateXXH64: stateHash(p.State), Checkpoint: *rep.Sessions[0].Checkpoint}, nil
}

func stateHash(b []byte) string { return fmt.Sprintf("%016x", xxhash.Sum64(b)) }

// cannotResume: the refresh falls back to a whole import.
func cannotResume(err error) bool { return errors.Is(err, input.ErrCannotResume) }
