package live

// The overlapped refresh (docs/LIVE.md, "The resume point"): hashing the
// consumed prefix of a 100 MB file takes about as long as all the rest of
// an incremental refresh, and the refresh reads only the bytes from the
// resume point on. So the hash runs beside the refresh, and nothing the
// next run trusts is written before it is known: state.json is written
// only once the hash says the consumed prefix is the one it named. Until
// then the cache session may hold the refresh's nodes and resume.bin its
// new state, but state.json, removed before the session is cut back,
// vouches for neither; when the hash disagrees the session is dropped and
// the file imported afresh, as the serial path would.

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/importer"
)

// overlapDiscards counts the overlapped refreshes whose work was thrown
// away because the prefix had changed (for the tests).
var overlapDiscards atomic.Int64

// overlappable says whether a refresh of a file of size bytes can run
// beside its prefix hash: a grown file with a resume point the refresh
// would use, and no sub-agent files (they are hashed and compared first).
func overlappable(old state, cars []sidecar, size int64, from string) bool {
	resumable := old.Format == importer.ClaudeCode || old.Format == importer.Codex
	sameFormat := from == "" || from == importer.Auto || from == old.Format
	return old.Resume != nil && resumable && sameFormat && len(cars) == 0 && len(old.Sidecars) == 0 &&
		size > old.Consumed
}

type hashed struct {
	prefix, full string
	size         int64
	err          error
}

// refreshOverlapped refreshes the cache session from its resume point
// while the first size bytes of the file are hashed. done is false when
// the hash shows the consumed prefix changed (or the file got shorter
// than size while it was read): the session is then dropped, e.Reason
// says why, and the caller imports afresh.
func refreshOverlapped(ctx context.Context, e *Entry, dir string, old state, size int64, prepare func(), opts Options) (rep *importer.Report, res *input.Resume, point *resumeState, done bool, err error) {
	ch := make(chan hashed, 1)
	go func() {
		var h hashed
		h.prefix, h.full, h.size, h.err = hashUpTo(e.File, old.Consumed, true, size)
		prepare()
		ch <- h
	}()
	// The import reads no further than size (input.Resume.Limit): exactly
	// the bytes hashed.
	e.Consumed, e.Format = size, old.Format
	rep, res, ierr := importInto(ctx, e, dir, old, Appended, "", false, opts)
	if ierr == nil {
		// resume.bin too is written while the hash runs: no state.json
		// names it until the hash matched (it was removed before the
		// rewind), and a fresh import writes its own.
		point, ierr = saveResume(dir, rep, res, size, e.ahead)
	}
	h := <-ch
	// A write saveResume did not wait for (the import failed after
	// starting it) ends before e, which holds it, is reset below.
	_ = e.ahead.wait()
	if h.err != nil {
		return nil, nil, nil, false, h.err
	}
	if h.size == size && h.prefix == old.PrefixHash {
		e.PrefixHash = h.full
		return rep, res, point, true, ierr
	}
	overlapDiscards.Add(1)
	*e = Entry{File: e.File, Session: e.Session}
	if h.size < size {
		e.Reason = fmt.Sprintf("the file got shorter than %d bytes while it was read (truncated or rewritten)", size)
	} else {
		e.Reason = fmt.Sprintf("the first %d bytes changed since they were imported (the file was rewritten)", old.Consumed)
	}
	return nil, nil, nil, false, dropSession(e, dir, opts.Archive)
}
