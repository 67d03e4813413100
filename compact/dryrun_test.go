package compact

import (
	"context"
	"errors"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/summarize"
)

// A dry run with the offline summarizer builds and checks the candidate,
// so its verdict and figures match what the real run then does; with any
// other summarizer it makes no call and says it did not check.
func TestDryRunChecksTheOfflineCandidate(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		fixture string
		keep    int
		maxSum  int
		reject  error
	}{
		// The objective alone is over a 40-token ceiling.
		{"tools", 300, 40, ErrOversized},
		{"tools", 300, 0, nil},
		// A summary is kept under what it replaces, so folding one short
		// turn still reduces (it was non-reducing before the cap did).
		{"fork", 10, 0, nil},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			dir := sessiontest.CopyFixture(t, tc.fixture)
			files := snapshotFiles(t, dir)
			nev := len(events(t, dir))
			o := opts(dir, summarize.Extractive{}, tc.keep)
			o.MaxSummaryTokens = tc.maxSum
			dry, err := DryRun(ctx, o)
			if err != nil || dry.Outcome != OutcomePlanned || !dry.Checked {
				t.Fatalf("%v %+v", err, dry)
			}
			if !errors.Is(dry.Rejected, tc.reject) || (tc.reject == nil) != (dry.Rejected == nil) {
				t.Fatalf("dry run verdict %v, want %v", dry.Rejected, tc.reject)
			}
			if snapshotFiles(t, dir) != files || len(events(t, dir)) != nev {
				t.Fatal("a dry run wrote")
			}
			real, err := Compact(ctx, o)
			if tc.reject != nil {
				var fe *FailedError
				if !errors.As(err, &fe) || !errors.Is(err, tc.reject) {
					t.Fatalf("real run: %v, the dry run predicted %v", err, tc.reject)
				}
				return
			}
			if err != nil || real.Outcome != OutcomeSucceeded {
				t.Fatalf("real run: %v %+v", err, real)
			}
			if dry.TokensAfter != real.TokensAfter || dry.SummaryTokens != real.SummaryTokens || dry.TokensAfter >= dry.TokensBefore {
				t.Fatalf("dry run predicted %d→%d (summary %d), real run %d→%d (summary %d)",
					dry.TokensBefore, dry.TokensAfter, dry.SummaryTokens, real.TokensBefore, real.TokensAfter, real.SummaryTokens)
			}
		})
	}
	t.Run("other summarizers are not run", func(t *testing.T) {
		dir := sessiontest.CopyFixture(t, "fork")
		o := opts(dir, mustNotCall{t}, 10)
		res, err := DryRun(ctx, o)
		if err != nil || res.Outcome != OutcomePlanned || res.Checked || res.Rejected != nil {
			t.Fatalf("%v %+v", err, res)
		}
	})
}
