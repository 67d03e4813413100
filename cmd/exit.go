package cmd

import (
	"context"
	"errors"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/transcript"
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
	ExitInternal      = 70
	ExitInterrupted   = 130
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

// exitCoder is implemented by error types of the library packages that
// carry their own code (compact's failed and changed outcomes, render's
// does-not-fit); the table below lists them.
type exitCoder interface{ ExitCode() int }

// ExitCode maps an error to its exit code:
//
//	*SilentError               its Code
//	*UsageError                2
//	*transcript.ParseError     2 (malformed or unreadable input)
//	*transcript.ValidationError 2 (a rejected write; nothing written)
//	*transcript.NotSessionError 2
//	*dag.IntegrityError        2
//	*render.HeadError          2
//	*transcript.LockedError    4
//	exitCoder                  its ExitCode():
//	  *estimate.UnknownModelError, *estimate.UnknownEncodingError  2
//	  *compact.BrokenError (the session fails verify)              2
//	  *fit.OutputCapError, *fit.NoBudgetError                      2
//	  *graph.AroundError                                           2
//	  *audit.NoSummaryError, *transcript.PinError                  2
//	  *compact.FailedError                                         3
//	  *compact.ChangedError                                        4
//	  *fit.DoesNotFitError                                         5
//	context.Canceled           130
//	anything else              2
func ExitCode(err error) int {
	var silent *SilentError
	var locked *transcript.LockedError
	var coder exitCoder
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &silent):
		return silent.Code
	case errors.As(err, &locked):
		return ExitBusy
	case errors.As(err, &coder):
		return coder.ExitCode()
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	}
	var (
		usage     *UsageError
		parse     *transcript.ParseError
		invalid   *transcript.ValidationError
		integrity *dag.IntegrityError
		head      *render.HeadError
	)
	switch {
	case errors.As(err, &usage), errors.As(err, &parse), errors.As(err, &invalid),
		errors.As(err, &integrity), errors.As(err, &head):
		return ExitUsage
	}
	return ExitUsage
}
