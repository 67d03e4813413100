package compact

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/summarize"
	"github.com/ctxfold/ctxfold/transcript"
	"github.com/ctxfold/ctxfold/verify"
)

// Outcomes (docs/COMPACT.md §5), plus changed (the source moved underneath) and
// planned (a dry run).
const (
	OutcomeSucceeded = "succeeded"
	OutcomeNoOp      = "no_op"
	OutcomeFailed    = "failed"
	OutcomeChanged   = "changed"
	OutcomePlanned   = "planned"
)

// Event types appended to events.jsonl (transcript.CompactionEvent).
const (
	EventStarted  = transcript.EventCompactionStarted
	EventFinished = transcript.EventCompactionFinished
	EventFailed   = transcript.EventCompactionFailed
)

// The summary's ceiling, unless --max-summary-tokens sets it: 5% of the
// model window within [DefaultMaxSummaryTokens, MaxAutoSummaryTokens]
// (4,000 without a window). The cap asked of a summarizer is a quarter of
// what it replaces, within [MinSummaryTokens, the ceiling]. A large window
// gets a larger ceiling so that a re-compaction can carry a client's own
// summary whole (Claude Code's run to 3,500 tokens) and still keep the
// facts of the newly covered turns (docs/COMPACT.md §3).
const (
	DefaultMaxSummaryTokens = 4_000
	MaxAutoSummaryTokens    = 16_000
	MinSummaryTokens        = 256
)

// SummaryCeiling is the default ceiling for a model window (0: unknown).
func SummaryCeiling(window int) int {
	return min(max(window/20, DefaultMaxSummaryTokens), MaxAutoSummaryTokens)
}

// HistoryCeiling is the default ceiling for a long covered history: the
// same 5% of what the summary replaces, bounded by the retained-token
// target (the summary never outgrows the tail the compaction keeps raw).
// The default ceiling is the larger of the two (docs/COMPACT.md §3): a
// history longer than the window (a 1M-token model, a session imported
// whole) has more facts than the window's ceiling holds, and the summary
// may then grow past it where its facts need the room — it grows only by
// facts, never by prose.
func HistoryCeiling(replaced, target int) int {
	return min(replaced/20, target)
}

// How the summary's ceiling was chosen (Result.CeilingBasis).
const (
	CeilingFlag    = "max-summary-tokens"
	CeilingWindow  = "window"
	CeilingHistory = "covered history"
)

// Options configure one compaction.
type Options struct {
	Dir   string
	Open  store.OpenOptions
	Store store.WriteOptions
	// Estimate selects the model; an empty Model means the session's, then
	// DefaultModel (the order `ctxfold estimate` resolves it in).
	Estimate     estimate.Options
	DefaultModel string
	// KeepTokens overrides the retained-token target (0: from the window).
	KeepTokens int
	// MaxSummaryTokens is the summary's ceiling (0: SummaryCeiling of the
	// window).
	MaxSummaryTokens int
	// IfAbove compacts only when the view's budget percentage is at least
	// this (0: always; Run.Triggered).
	IfAbove float64
	// MinSurvival rejects a summary that keeps less than this percentage
	// of any kind of fact (0: no gate; OutcomeRejected, nothing written).
	MinSurvival float64
	Summarizer  summarize.Summarizer
	// Now is the clock for event times and durations (nil: time.Now).
	Now func() time.Time
}

// Result is what a compaction did.
type Result struct {
	Outcome string
	// Reason says why a no-op was one.
	Reason string
	Plan   *Plan
	// ClientSummary: the plan's previous summary was not written by a
	// ctxfold compaction (no compaction_finished names it) but imported
	// with the client's transcript. A history within the target is then
	// not "already compacted" by ctxfold but simply within the target.
	ClientSummary bool
	// CalibratedBefore is the calibrated total of the view before, the
	// figure `ctxfold estimate` prints (0 without a calibration).
	CalibratedBefore int
	// SummaryID is the new summary node; CoversIDs its covers_ids and
	// SummarisedCount their number (the coverage reported to people).
	SummaryID       string
	CoversIDs       []string
	SummarisedCount int
	TokensBefore    int
	TokensAfter     int
	SummaryTokens   int
	Summarizer      string
	Model           string
	// BudgetPct is the view's budget percentage before compacting, on
	// BudgetBasis (estimate's: calibrated when recorded usage allows), the
	// figure --if-above compares.
	BudgetPct   float64
	BudgetBasis string
	// Correction is the calibration fitted on the view before compacting
	// (nil without recorded usage or with NoCalibrate): the new view keeps
	// its prefix and slope, so Correction.Apply(TokensAfter) is the
	// calibrated total after.
	Correction *estimate.Correction
	Warnings   []store.Warning
	// Err is the failure (Outcome failed or changed).
	Err error
	// Checked is true when a dry run also built and validated the
	// candidate summary (only with an offline summarizer: Offline);
	// Rejected is then the reason it would be rejected, nil when it would
	// be accepted, and TokensAfter/SummaryTokens are its figures.
	Checked  bool
	Rejected error
	// SummaryCap is what the summary node was asked to stay within
	// (tokens, its prefix included); SummaryTokens past it is growth to
	// hold facts and pins (Growth). 0 before Request.
	SummaryCap int
	// SummaryCeiling is how far the summary may grow past SummaryCap for
	// facts and pins (tokens, its prefix included), and CeilingBasis
	// where it came from: --max-summary-tokens, the window, or the
	// covered history (HistoryCeiling). 0 and "" before Request.
	SummaryCeiling int
	CeilingBasis   string
	// Survival is the survival of the covered turns' facts in the view
	// with the summary (nil until a candidate was checked); LedgerFacts
	// how many of them the fact ledger appended to the summarizer's text.
	Survival    *transcript.FactSurvival
	LedgerFacts int
}

// Growth is how many tokens the summary grew past its cap (0 within it).
func (r *Result) Growth() int {
	if r.SummaryCap == 0 || r.SummaryTokens <= r.SummaryCap {
		return 0
	}
	return r.SummaryTokens - r.SummaryCap
}

// cancelledError is ErrCancelled: its text is the compaction_failed
// event's "cancelled"; errors.Is finds context.Canceled in it.
type cancelledError struct{}

func (cancelledError) Error() string        { return "cancelled" }
func (cancelledError) Is(target error) bool { return target == context.Canceled }

// FailedError is a failed compaction: the summarizer failed or was
// cancelled, or its summary was rejected. Nothing was written but the
// compaction_failed event.
type FailedError struct{ Err error }

func (e *FailedError) Error() string { return e.Err.Error() }
func (e *FailedError) Unwrap() error { return e.Err }

// ChangedError: HEAD, the active summary or the covered segment changed
// while the summarizer ran; nothing was written and the run can be retried.
type ChangedError struct{ Msg string }

func (e *ChangedError) Error() string {
	return "session changed during compaction: " + e.Msg + "; nothing written"
}
func (e *ChangedError) Hint() string { return "run the compaction again" }

// BrokenError: the session already fails `ctxfold verify`, so compaction
// refused it before planning; nothing was written and no event appended.
// Finding is the first error finding (file order within category order).
type BrokenError struct {
	Dir     string
	Finding verify.Finding
	// Errors is how many error findings the session has.
	Errors int
}

func (e *BrokenError) Error() string {
	f := e.Finding
	f.Msg = f.Code + ": " + f.Msg
	return fmt.Sprintf("%s; the session fails verify (%d %s), nothing compacted", f.String(), e.Errors, plural(e.Errors, "error", "errors"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Hint points at the command that lists every fault.
func (e *BrokenError) Hint() string { return fmt.Sprintf("run 'ctxfold verify %s'", e.Dir) }

// Rejection reasons of a summary (docs/COMPACT.md §4).
var (
	ErrEmptySummary = errors.New("the summarizer returned an empty summary")
	ErrOversized    = errors.New("the summary is over the size ceiling")
	ErrNonReducing  = errors.New("the summary does not make the rendered context smaller")
	// ErrCancelled is a summarizer stopped by Ctrl-C: it is a
	// context.Canceled, so the command exits 130 like every interrupted
	// run, not 3 (README, "Exit codes").
	ErrCancelled        error = cancelledError{}
	errNoSummarizerConf       = errors.New("compact: no summarizer")
)

// snapshot is what the plan was made from, re-checked under the lock.
type snapshot struct {
	head, active string
	covers       []string
	preds        map[string]string
	// pins are the pinned ids among covers the summary was asked to
	// quote (docs/COMPACT.md §4: a pin made during the run must not be lost).
	pins []string
}

// Candidate is a validated summary node with its figures.
type Candidate struct {
	node transcript.Node
	// after is the rendered total with the summary substituted
	// (tokens_after); tokens the summary node's own count.
	after, tokens int
	// view is the candidate view (what the model reads once it is
	// stored); survival its facts' survival; ledger how many facts the
	// fact ledger gave back (Run.check).
	view     []*transcript.Node
	survival *transcript.FactSurvival
	ledger   int
}

// validate builds the summary node from text and applies docs/COMPACT.md §4
// step 4: not empty, within the ceiling, and a strictly smaller rendered
// total. The candidate is returned with its figures even when rejected
// (nil only when it could not be measured).
func validate(ctx context.Context, view *render.View, plan *Plan, text string, before, maxTok int, eopts estimate.Options, now func() time.Time) (*Candidate, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, ErrEmptySummary
	}
	summary := transcript.Node{
		Predecessor: plan.Predecessor,
		Role:        transcript.SummaryRole,
		Name:        transcript.SummaryName,
		Content:     transcript.TextContent(transcript.SummaryPrefix + text + "\n"),
		CreatedAt:   now().UTC().Format(time.RFC3339Nano),
	}
	summary.SetMeta("compaction", true)
	summary.SetMeta("covers_ids", plan.CoversIDs)
	summary.ID = store.NewID(&summary)
	// Render the candidate in memory and require a strictly smaller total
	// through the same entry point. Its total is tokens_after (what
	// `ctxfold estimate` prints once it is stored), and the summary node's
	// own count is summary_tokens — one definition for the ceiling and the
	// event.
	preview, err := view.Preview(&summary)
	if err != nil {
		return nil, err
	}
	pdetail := eopts
	pdetail.NodeDetail = true
	after, err := estimate.Nodes(ctx, preview, pdetail)
	if err != nil {
		return nil, err
	}
	c := &Candidate{node: summary, after: after.Total, view: preview}
	for _, nc := range after.Nodes {
		if nc.ID == summary.ID {
			c.tokens = nc.Tokens
		}
	}
	if c.tokens > maxTok {
		return c, fmt.Errorf("%w (%d tokens, ceiling %d)", ErrOversized, c.tokens, maxTok)
	}
	if after.Total >= before {
		return c, fmt.Errorf("%w (%d → %d tokens)", ErrNonReducing, before, after.Total)
	}
	return c, nil
}

// checkSession runs the verify engine and returns a *BrokenError for the
// first error finding, or nil.
func checkSession(ctx context.Context, dir string, s *store.Session) error {
	var first *verify.Finding
	vr, err := verify.Session(ctx, s, verify.Options{}, func(f verify.Finding) {
		if first == nil && f.Severity == verify.Error {
			first = &f
		}
	})
	if err != nil {
		return err
	}
	if first != nil {
		return &BrokenError{Dir: dir, Finding: *first, Errors: vr.Errors}
	}
	return nil
}

// diff says what changed since the plan was made, or "": HEAD, the
// active summary, the covered nodes, or which of them are pinned (a pin
// or unpin made while the summarizer ran; the summary quotes the pins of
// the moment Request read them).
func (sn snapshot) diff(s *store.Session) (string, error) {
	if s.Meta.Head != sn.head {
		return fmt.Sprintf("HEAD moved from %q to %q", sn.head, s.Meta.Head), nil
	}
	if s.Meta.ActiveSummaryID != sn.active {
		return fmt.Sprintf("the active summary changed from %q to %q", sn.active, s.Meta.ActiveSummaryID), nil
	}
	for _, id := range sn.covers {
		r, ok := s.RefByID(id)
		if !ok || r.Predecessor != sn.preds[id] {
			return fmt.Sprintf("covered node %q changed", id), nil
		}
	}
	pins, err := pinnedAmong(s, sn.covers)
	if err != nil {
		return "", err
	}
	if !slices.Equal(pins, sn.pins) {
		return fmt.Sprintf("the pinned nodes among the covered ones changed from %v to %v", nonNil(sn.pins), nonNil(pins)), nil
	}
	return "", nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func stamp(now func() time.Time) string { return now().UTC().Format(time.RFC3339Nano) }

// perNode returns each node's count from estimate's breakdown.
func perNode(ctx context.Context, nodes []*transcript.Node, res *estimate.Result, opts estimate.Options) ([]int, error) {
	out := make([]int, len(nodes))
	if len(res.Nodes) == len(nodes) {
		for i, nc := range res.Nodes {
			out[i] = nc.Tokens
		}
		return out, nil
	}
	// The breakdown was left out: measure node by node, through the same
	// entry point.
	for i, n := range nodes {
		r, err := estimate.Nodes(ctx, []*transcript.Node{n}, opts)
		if err != nil {
			return nil, err
		}
		out[i] = r.Total
	}
	return out, nil
}

// window is the model's context window as estimate resolves it (0 when
// neither a model nor a window is known: the target is then its floor).
func window(opts estimate.Options) (int, error) {
	if opts.Model == "" && opts.Window <= 0 {
		return 0, nil
	}
	b, err := estimate.Budget(opts)
	if err != nil {
		return 0, err
	}
	return b.Window, nil
}
