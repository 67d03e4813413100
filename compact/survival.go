package compact

import (
	"context"
	"fmt"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/summarize"
	"github.com/ctxfold/ctxfold/transcript"
)

// OutcomeRejected: the summary kept less than --min-survival of a kind of
// fact, even with the ledger; nothing was written, not even an event.
const OutcomeRejected = "rejected"

// RejectedError is a summary below Options.MinSurvival (exit 3, as the
// other rejections; docs/COMPACT.md §4).
type RejectedError struct {
	// Kind is the kind with the lowest survival, Pct that survival.
	Kind     string
	Pct, Min float64
	Survival *transcript.FactSurvival
}

func (e *RejectedError) Error() string {
	k := e.Survival.Kinds[e.Kind]
	return fmt.Sprintf("the summary keeps %d of %d %s facts (%.1f%%), below --min-survival %g%%; nothing written",
		k.Kept, k.Total, e.Kind, e.Pct, e.Min)
}

// Hint says what may let the summary through.
func (e *RejectedError) Hint() string {
	return "raise --max-summary-tokens, use the extractive summarizer, or lower --min-survival; 'ctxfold compact --dry-run' shows the extractive summary's survival"
}

// check validates text as the summary, scores its facts against the
// candidate view (audit.Survive: what `ctxfold audit` reports once it is
// stored), appends the facts it lacks as a ledger when the ceiling has
// room for them (docs/COMPACT.md §3: a model's summary keeps what the
// model chose; the ledger gives back what it dropped) and validates
// again, then applies Options.MinSurvival. The candidate carries its
// survival; the error is a rejection of docs/COMPACT.md §4 or a
// *RejectedError.
func (r *Run) check(ctx context.Context, req summarize.Request, text string, dry bool) (*Candidate, error) {
	c, err := r.validate(ctx, text, dry)
	if err != nil {
		return c, err
	}
	sv := audit.Survive(req.Facts, c.view)
	if len(sv.Missing) > 0 {
		ledgered, left, lerr := summarize.Ledger(text, audit.Rank(sv.Missing), req.Ceiling, req.Encoding)
		if lerr != nil {
			return c, lerr
		}
		if before := len(sv.Missing); left < before {
			lc, lerr := r.validate(ctx, ledgered, dry)
			if lerr == nil {
				c, sv = lc, audit.Survive(req.Facts, lc.view)
				c.ledger = before - len(sv.Missing)
			}
			// A ledger the checks refuse (it made the summary
			// non-reducing) is left off: the summary stands as written.
		}
	}
	c.survival = sv.Figures
	if min := r.opts.MinSurvival; min > 0 {
		if low, kind := lowestKind(sv.Figures); low < min {
			return c, &RejectedError{Kind: kind, Pct: low, Min: min, Survival: sv.Figures}
		}
	}
	return c, nil
}

// lowestKind is the kind with facts whose survival is lowest, in
// audit.Kinds order on a tie (100 and "" when no kind has facts).
func lowestKind(f *transcript.FactSurvival) (float64, string) {
	low, kind := 100.0, ""
	for _, k := range audit.Kinds {
		if ks := f.Kinds[string(k)]; ks.Total > 0 && (kind == "" || ks.SurvivalPct < low) {
			low, kind = ks.SurvivalPct, string(k)
		}
	}
	return low, kind
}
