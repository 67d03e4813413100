package input

import "errors"

// A resumable import (live's incremental refresh, docs/LIVE.md
// "The resume point"): an importer that supports it records a resume
// point — a line start of the file and its own state there, after which a
// fresh import's nodes depend only on the lines from the point on and
// that state — and, given the point back with the file grown, reads only
// the lines from it on and emits only the nodes planned from it on.

// Resume asks an importer for a resumable import and carries its results.
type Resume struct {
	// State is the State of the Point a previous import of the same file
	// returned; nil reads the file from its start. With a State, the sink
	// is the session that import wrote, cut back to its checkpoint, and
	// only the nodes after the point are emitted.
	State []byte
	// Point is where the next import can resume, set by the import; nil
	// when none qualifies.
	Point *Point
	// Parsed is how many bytes of the file this import parsed: its size
	// (or Limit) less the resume offset.
	Parsed int64
	// Limit, when above 0, is how much of the file the import reads: the
	// prefix the caller hashed, when the client may be writing more
	// meanwhile (what follows is the next import's).
	Limit int64
	// Saved, when set, is given the Point as soon as it is final — before
	// the import's last nodes are committed, possibly on another goroutine
	// while they are emitted — so the caller can write it meanwhile; Point
	// is still set at the end, and Saved has returned before Import does.
	// A Claude Code import calls it; others may not.
	Saved func(p *Point)
}

// Point is a resume point: the importer's state at a line start.
type Point struct {
	State []byte
	// Offset is the byte offset of the line start; Nodes how many nodes
	// were emitted before the checkpoint.
	Offset int64
	Nodes  int
}

// ErrCannotResume: the saved state does not apply to the file as it is
// now; the caller imports the file afresh.
var ErrCannotResume = errors.New("cannot resume the import from the saved point")

// Checkpointer is what a sink implements to commit what it holds when the
// importer has emitted every node before the resume point.
type Checkpointer interface{ Checkpoint() error }
