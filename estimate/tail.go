// This file answers a status from a transcript's tail (docs/ESTIMATE.md,
// "The tail read"): the calibrated figure is the latest request's recorded
// input plus what follows it, with a slope fitted on the last FitWindow
// requests, so the tail holding those requests gives the number the whole
// history gives.

package estimate

import (
	"context"
	"errors"

	"github.com/ctxfold/ctxfold/live"
)

// Tail sizes: the first tail copied, and the largest tried before the
// tail read gives up (a session with few, huge requests).
const (
	DefaultTailBytes = 1 << 20
	MaxTailBytes     = 64 << 20
	// tailGrowth is how much longer each retry's tail is.
	tailGrowth = 4
)

// ErrTailUnusable: the tail cannot give the whole history's number; the
// caller measures the whole transcript instead.
var ErrTailUnusable = errors.New("the tail cannot answer")

// TailOptions configure FromTail.
type TailOptions struct {
	Live    live.Options
	Session SessionOptions
	// MinBytes is the first tail's size (DefaultTailBytes when 0), MaxBytes
	// the largest tried (MaxTailBytes when 0).
	MinBytes, MaxBytes int64
}

// TailAnswer is a status answered from a transcript's tail.
type TailAnswer struct {
	// Result is the tail session's: its calibrated figures (Calibration's
	// CalibratedTotal, BudgetPct) and budget are the transcript's; its raw
	// counts are the tail's only.
	Result *Result
	// Compactions is the transcript's compaction count: its boundaries
	// (live.TailEntry.Compactions).
	Compactions int
	Entry       *live.TailEntry
}

// FromTail measures file from its tail: the last MinBytes first, four
// times as many while the tail holds fewer than FitWindow+2 recorded
// requests. It returns ErrTailUnusable when no tail up to MaxBytes can
// answer: calibration off, no usage recorded, or a compaction after the latest request
// (the view is then anchored on the client's prefix, which only the
// whole history shows). The caller closes the answer's Entry.
func FromTail(ctx context.Context, file string, o TailOptions) (*TailAnswer, error) {
	if o.Session.Estimate.NoCalibrate {
		// The raw count of the whole view is the figure: no tail holds it.
		return nil, ErrTailUnusable
	}
	size := o.MinBytes
	if size <= 0 {
		size = DefaultTailBytes
	}
	maxSize := o.MaxBytes
	if maxSize <= 0 {
		maxSize = MaxTailBytes
	}
	for ; ; size = min(maxSize, size*tailGrowth) {
		te, err := live.OpenTail(ctx, file, o.Live, size)
		// A tail inside the file that is not the longest allowed yet: a
		// longer one may answer where this one does not.
		longer := te != nil && te.Start > 0 && size < maxSize
		if err != nil {
			if longer {
				continue
			}
			return nil, err
		}
		// A tail with no assistant line records no model yet (out.Err).
		out := Session(ctx, te.Session, o.Session)
		err = out.Err
		if err == nil {
			ok, enough := tailAnswers(out.Result, te)
			if ok && (enough || te.Start == 0) {
				// A tail that is the whole file has the whole file's
				// summaries; a strict suffix counts the boundaries
				// (live.TailEntry).
				compactions := te.Compactions
				if te.Start == 0 && out.Summaries >= 0 {
					compactions = out.Summaries
				}
				return &TailAnswer{Result: out.Result, Compactions: compactions, Entry: te}, nil
			}
			err, longer = ErrTailUnusable, longer && ok
		}
		te.Close()
		if !longer {
			return nil, err
		}
	}
}

// tailAnswers says whether r, the tail's measurement, anchors on its latest
// request (ok), and whether the tail holds the requests the fit reads and
// one before them, whose turn may start before the tail (enough).
func tailAnswers(r *Result, te *live.TailEntry) (ok, enough bool) {
	c := r.Calibration
	if c == nil || r.BudgetBasis != BasisCalibrated {
		// No recorded request in the tail: a longer one may hold one.
		return te.Start > 0, false
	}
	if c.Anchor != AnchorLatest {
		return false, false
	}
	return true, c.Requests >= FitWindow+2
}

// TailStatus is StatusOf for a tail's answer: RawTokens, the whole view's
// own count, is not known (0).
func TailStatus(a *TailAnswer, compactAt float64) Status {
	s := StatusOf(a.Result, compactAt)
	s.RawTokens = 0
	return s
}
