package cmd

import (
	"context"
	"os"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/live"
)

// How the status line read the transcript (StatusLine.Read).
const (
	readFull = "full"
	readTail = "tail"
)

// tailMinFile is the default of --tail-min-bytes (docs/LIVE.md, "The
// tail"): below it the whole file's cache session is quick to build and
// also gives the raw count.
const tailMinFile = 8 << 20

// transcriptStatus is a transcript file's status: the figures of the
// status line and of estimate --tail, one measurement for both.
type transcriptStatus struct {
	estimate.Status
	Compactions int
	// File is the transcript, Session the cache session read, Update how it
	// was brought up to date, ParsedBytes the bytes parsed for it; Read is
	// readTail (from byte TailFrom) or readFull.
	File, Session, Update, Read string
	ParsedBytes, TailFrom       int64
	// Result is the whole view's measurement; nil from the tail.
	Result *estimate.Result
	// Close lets the cache session be refreshed again.
	Close func()
}

// measureTranscript measures file from its tail when it is at least
// tailMin bytes (0: never) and the tail gives the whole file's number,
// else through its whole cache session, as estimate FILE does. Whatever
// stops the tail (ErrTailUnusable, another client's file, a cache it
// cannot use), the whole file answers and reports its own errors.
func measureTranscript(ctx context.Context, file string, lo live.Options, so estimate.SessionOptions, tailMin int64, refreshGC func() (restore func())) (*transcriptStatus, error) {
	compactAt := so.Estimate.CompactAt
	restore := refreshGC() // liveGC: the refresh collects at 100%
	if fi, err := os.Stat(file); err == nil && tailMin > 0 && fi.Mode().IsRegular() && fi.Size() >= tailMin {
		if a, err := estimate.FromTail(ctx, file, estimate.TailOptions{Live: lo, Session: so}); err == nil {
			restore()
			e := a.Entry
			return &transcriptStatus{Status: estimate.TailStatus(a, compactAt), Compactions: a.Compactions,
				File: e.Transcript, Session: e.Session, Update: e.TailUpdate, Read: readTail, ParsedBytes: e.ParsedBytes,
				TailFrom: e.Start, Close: e.Close}, nil
		}
	}
	e, err := live.Open(ctx, file, lo)
	restore()
	if err != nil {
		return nil, err
	}
	out := estimate.Session(ctx, e.Session, so)
	if out.Err != nil {
		e.Close()
		return nil, out.Err
	}
	withProjectPrefix(ctx, e, &out, lo, so)
	// The estimate knows the session's summaries (compactions so far)
	// without indexing it again, except from a view an earlier version
	// stored.
	n := out.Summaries
	if n < 0 {
		if n, err = countSummaries(e.Session, so.Open); err != nil {
			e.Close()
			return nil, err
		}
	}
	return &transcriptStatus{Status: estimate.StatusOf(out.Result, compactAt), Compactions: n, File: e.File,
		Session: e.Session, Update: e.Update, Read: readFull, ParsedBytes: e.ParsedBytes, Result: out.Result, Close: e.Close}, nil
}
