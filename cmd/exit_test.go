package cmd

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/compact"
	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/fit"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report/graph"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// TestExitCodeTable pins every row of ExitCode's table, each error wrapped
// once (the table matches anywhere in the chain), and the two orderings
// that matter: a lock or a failed compaction outranks the cancellation it
// wraps, while plain input errors do not.
func TestExitCodeTable(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("context: %w", err) }
	cases := []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{&SilentError{Code: ExitCheckFailed}, ExitCheckFailed},
		{&store.LockedError{}, ExitBusy},
		{&compact.FailedError{Err: errors.New("x")}, ExitCompactFailed},
		{&compactError{msg: "x", err: &compact.FailedError{Err: errors.New("x")}}, ExitCompactFailed},
		{&compactError{msg: "x", err: &compact.ChangedError{Msg: "x"}}, ExitBusy},
		{&compact.ChangedError{Msg: "x"}, ExitBusy},
		{&fit.DoesNotFitError{}, ExitDoesNotFit},
		{&store.CacheSessionError{}, ExitCacheSession},
		{&store.WriteError{File: "nodes.jsonl", Op: "fsync"}, ExitWriteFailed},
		{fmt.Errorf("append: %w", &store.WriteError{File: "session.json"}), ExitWriteFailed},
		{&compact.BrokenError{}, ExitUsage},
		{&estimate.UnknownModelError{}, ExitUsage},
		{&estimate.UnknownEncodingError{}, ExitUsage},
		{&fit.OutputCapError{}, ExitUsage},
		{&fit.NoBudgetError{}, ExitUsage},
		{&graph.AroundError{}, ExitUsage},
		{&audit.NoSummaryError{}, ExitUsage},
		{&store.PinError{}, ExitUsage},
		{&UsageError{Err: errors.New("x")}, ExitUsage},
		{&transcript.ParseError{}, ExitUsage},
		{&store.ValidationError{}, ExitUsage},
		{&dag.IntegrityError{}, ExitUsage},
		{&render.HeadError{}, ExitUsage},
		{errors.New("anything"), ExitUsage},
		{context.Canceled, ExitInterrupted},
		{&compact.FailedError{Err: context.Canceled}, ExitCompactFailed},
		{errors.Join(&store.LockedError{}, context.Canceled), ExitBusy},
		{&UsageError{Err: context.Canceled}, ExitInterrupted},
	}
	for _, tc := range cases {
		for _, err := range []error{tc.err, wrap(tc.err)} {
			if tc.err == nil && err != nil {
				continue
			}
			if got := ExitCode(err); got != tc.want {
				t.Errorf("ExitCode(%T %v) = %d, want %d", err, err, got, tc.want)
			}
		}
	}
}
