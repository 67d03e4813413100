package cmd

import (
	"context"
	"errors"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/compact"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/fit"
	"github.com/ctxfold/ctxfold/report/graph"
	"github.com/ctxfold/ctxfold/store"
)

// Exit codes: the one table (README "Exit codes" and every command's EXIT
// STATUS section say the same).
const (
	ExitOK            = 0
	ExitCheckFailed   = 1
	ExitUsage         = 2
	ExitCompactFailed = 3
	ExitBusy          = 4
	ExitDoesNotFit    = 5
	// ExitCacheSession: a write to a cache session (ctxfold's copy of a
	// transcript file, docs/LIVE.md) was refused; nothing was written.
	ExitCacheSession = 6
	ExitWriteFailed  = 74
	ExitInternal     = 70
	ExitInterrupted  = 130
)

// UsageError is a bad command line.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }
func (e *UsageError) Hint() string  { return "see 'ctxfold help' for usage" }

// SilentError carries an exit code whose message was already printed (a
// failed check prints its own report).
type SilentError struct{ Code int }

func (e *SilentError) Error() string { return "exit status" }

// exitRule maps one error type (found anywhere in the chain, errors.As) to
// its code.
type exitRule struct {
	match func(error) bool
	code  int
}

func is[T error](err error) bool {
	var target T
	return errors.As(err, &target)
}

// exitRules is the one map from library error types to exit codes; the
// libraries carry no numbers. The first rule that matches wins, so the
// order matters where one chain could hold two: a lock or a failed
// compaction outranks the cancellation it may wrap. The input errors
// (bad usage, a ParseError, a rejected write, a NotSessionError, a
// store.IntegrityError, a render.HeadError) and anything unlisted get the
// default, ExitUsage; they are listed there, not here, because an
// interruption while reading must still exit 130.
var exitRules = []exitRule{
	{is[*store.LockedError], ExitBusy},
	// A summarizer stopped by Ctrl-C is a failed compaction too (the
	// event says "cancelled"), but the run was interrupted: 130.
	{func(err error) bool { return errors.Is(err, compact.ErrCancelled) }, ExitInterrupted},
	{is[*compact.FailedError], ExitCompactFailed},
	{is[*compact.RejectedError], ExitCompactFailed},
	{is[*compact.ChangedError], ExitBusy},
	{is[*fit.DoesNotFitError], ExitDoesNotFit},
	{is[*store.CacheSessionError], ExitCacheSession},
	{is[*store.WriteError], ExitWriteFailed},
	// Bad input that is named as such even when the run was interrupted.
	{is[*compact.BrokenError], ExitUsage},
	{is[*estimate.UnknownModelError], ExitUsage},
	{is[*estimate.UnknownEncodingError], ExitUsage},
	{is[*fit.OutputCapError], ExitUsage},
	{is[*fit.NoBudgetError], ExitUsage},
	{is[*graph.AroundError], ExitUsage},
	{is[*audit.NoSummaryError], ExitUsage},
	{is[*store.PinError], ExitUsage},
	{is[*compact.UndoError], ExitUsage},
	{func(err error) bool { return errors.Is(err, context.Canceled) }, ExitInterrupted},
}

// ExitCode maps an error to its exit code:
//
//	nil                          0
//	*SilentError                 its Code (a failed check, 1, printed its report)
//	*store.LockedError      4
//	compact.ErrCancelled         130 (Ctrl-C while summarizing)
//	*compact.FailedError         3
//	*compact.RejectedError       3
//	*compact.ChangedError        4
//	*fit.DoesNotFitError         5
//	*store.CacheSessionError 6
//	*store.WriteError       74 (the disk refused a write: full, read-only, I/O)
//	*compact.BrokenError, *estimate.UnknownModelError,
//	*estimate.UnknownEncodingError, *fit.OutputCapError,
//	*fit.NoBudgetError, *graph.AroundError, *audit.NoSummaryError,
//	*store.PinError, *compact.UndoError 2
//	context.Canceled             130
//	anything else                2 (*UsageError, *transcript.ParseError,
//	                             *store.ValidationError,
//	                             *store.NotSessionError,
//	                             *store.IntegrityError, *render.HeadError)
//
// A panic is 70 (Run's recover).
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var silent *SilentError
	if errors.As(err, &silent) {
		return silent.Code
	}
	for _, r := range exitRules {
		if r.match(err) {
			return r.code
		}
	}
	return ExitUsage
}
