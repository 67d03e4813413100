package compact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/summarize"
	"github.com/ctxfold/ctxfold/transcript"
)

// Run is one compaction in steps; Compact and DryRun are their two
// compositions, and a caller may compose them itself:
//
//	Measure → Triggered → Request → DryRun
//	                              → Start → Finish (Summarize → Validate → Persist, or Fail)
//
// Measure freezes the rendered view at HEAD and plans; Request gathers what
// the summarizer reads; Start writes compaction_started (or the no-op's
// compaction_finished); Summarize runs outside the lock; Validate checks
// the candidate in memory; Persist re-checks the source under the session
// lock and writes exactly one summary node plus compaction_finished. No
// step moves HEAD or rewrites a node.
type Run struct {
	opts   Options
	now    func() time.Time
	start  time.Time
	g      *dag.Graph
	view   *render.View
	eopts  estimate.Options
	before *estimate.Result
	in     PlanInput
	plan   *Plan
	maxTok int
	snap   snapshot
	res    *Result
	// pinIDs are the pinned ids among the covered ones when Request read
	// them: the summary quotes exactly their texts.
	pinIDs []string
	// pending is compaction_started, written with the outcome's event(s)
	// in one locked append (so a rejected summary writes nothing).
	pending *transcript.CompactionEvent
}

// Measure opens the session, refuses one that fails verify, resolves the
// model (estimate.Options.ForSession), measures the view as `ctxfold
// estimate` does and makes the plan. Close releases the session.
func Measure(ctx context.Context, opts Options) (*Run, error) {
	r := &Run{opts: opts, now: opts.Now}
	if r.now == nil {
		r.now = time.Now
	}
	r.start = r.now()
	if opts.Summarizer == nil {
		return nil, errNoSummarizerConf
	}
	g, err := dag.Open(opts.Dir, opts.Open)
	if err != nil {
		return nil, err
	}
	r.g = g
	if err := r.measure(ctx); err != nil {
		g.S.Close()
		return nil, err
	}
	return r, nil
}

func (r *Run) measure(ctx context.Context) error {
	opts, g := r.opts, r.g
	// A summary written into a session that already fails verify inherits
	// (and can add to) its faults — a splice mismatch makes the next
	// summary not extend the active one. Refuse it as append refuses a
	// broken graph; warnings do not block. verify is linear in the session.
	if err := checkSession(ctx, opts.Dir, g.S); err != nil {
		return err
	}
	res := &Result{Summarizer: opts.Summarizer.Name(), Warnings: g.S.Warnings}
	r.res = res
	eopts := opts.Estimate.ForSession(g.S.Meta, opts.DefaultModel)
	r.eopts = eopts
	res.Model = eopts.Model
	if rm, ok := estimate.ResolveModel(eopts.Model, eopts.Models); ok && rm.Warning() != "" {
		res.Warnings = append(res.Warnings, store.Warning{File: opts.Dir, Msg: rm.Warning()})
	}
	if eopts.Model == "" && eopts.Window <= 0 && (opts.KeepTokens <= 0 || opts.IfAbove > 0) {
		// Without a window there is neither a target nor a budget
		// percentage: refuse as `ctxfold estimate` does, rather than fold to
		// a floor nobody asked for or never fire --if-above.
		return fmt.Errorf("%s: %w", opts.Dir, &estimate.UnknownModelError{})
	}
	view, err := render.Build(g, "", false)
	if err != nil {
		return err
	}
	r.view = view
	// Before the first reply: the model an attachment names, else the
	// client's default, said to be assumed (estimate.ForSession).
	eopts = eopts.ForView(view)
	r.eopts, res.Model = eopts, eopts.Model
	if w := eopts.AssumedWarning(); w != "" {
		res.Warnings = append(res.Warnings, store.Warning{File: opts.Dir, Msg: w})
	}
	nodes, err := view.LoadNodes()
	if err != nil {
		return err
	}
	// tokens_before is the total `ctxfold estimate` prints for this view
	// (docs/COMPACT.md); the per-node breakdown sizes the turns.
	// Calibration against recorded usage decides only the budget
	// percentage --if-above reads (and is reported for the view after),
	// never the plan's token figures.
	detail := eopts
	detail.NodeDetail = true
	before, err := estimate.View(ctx, view, detail)
	if err != nil {
		return err
	}
	r.before = before
	res.TokensBefore, res.TokensAfter = before.Total, before.Total
	res.BudgetPct, res.BudgetBasis = before.BudgetPct, before.BudgetBasis
	res.Correction = before.Calibration.Correction()
	if before.Calibration != nil {
		res.CalibratedBefore = before.Calibration.CalibratedTotal
	}
	target := opts.KeepTokens
	if target <= 0 {
		w, err := window(eopts)
		if err != nil {
			return err
		}
		target = Target(w)
	}
	tokens, err := perNode(ctx, nodes, before, eopts)
	if err != nil {
		return err
	}
	r.in = PlanInput{Nodes: nodes, Tokens: tokens, Total: before.Total, Target: target, PreviousCovers: previousCovers(g, view)}
	r.plan = MakePlan(r.in)
	res.Plan = r.plan
	if r.plan.Previous != nil && r.plan.NoOp {
		res.ClientSummary = !ownSummary(g.S, r.plan.Previous.ID)
	}
	return nil
}

// previousCovers is what the view's stored summary covers, nil when the
// view has none: its coverage may be a span, which only the graph expands
// (docs/FORMAT.md §4).
func previousCovers(g *dag.Graph, view *render.View) []string {
	if view.Substitution.Summary < 0 {
		return nil
	}
	return g.CoverIDs(view.Substitution.Summary)
}

// ownSummary reports whether a ctxfold compaction wrote the summary id: a
// compaction_finished event names it. An unreadable events file counts
// as ctxfold's (the message stays the one it always was).
func ownSummary(s *store.Session, id string) bool {
	found := false
	_, err := s.ReadEvents(func(ev store.EventLine) error {
		var e struct {
			Type      string `json:"type"`
			SummaryID string `json:"summary_id"`
		}
		if json.Unmarshal(ev.Raw, &e) == nil && e.Type == EventFinished && e.SummaryID == id {
			found = true
		}
		return nil
	})
	return found || err != nil
}

// Close releases the session.
func (r *Run) Close() error { return r.g.S.Close() }

// Result is what the run knows so far: the figures of the view before,
// the plan, warnings; the outcome once a step reached one.
func (r *Run) Result() *Result { return r.res }

// Triggered reports whether the view is at Options.IfAbove or over; when
// it is not, the result is the no-op below_threshold, and nothing is
// written (an auto-compaction that did not fire leaves no event).
func (r *Run) Triggered() bool {
	if r.opts.IfAbove > 0 && r.res.BudgetPct < r.opts.IfAbove {
		r.res.Outcome, r.res.Reason = OutcomeNoOp, ReasonBelowThreshold
		return false
	}
	return true
}

// Request is what the summarizer reads: the previous summary plus every
// newly covered turn (docs/COMPACT.md §3), the facts it would not see
// otherwise, the pinned texts, and the cap on its text.
func (r *Run) Request(ctx context.Context) (summarize.Request, error) {
	plan, g := r.plan, r.g
	maxTok, basis := r.opts.MaxSummaryTokens, CeilingFlag
	if maxTok <= 0 {
		w, err := window(r.eopts)
		if err != nil {
			return summarize.Request{}, err
		}
		maxTok, basis = SummaryCeiling(w), CeilingWindow
	}
	// The cap (prose included) follows the window's ceiling; only the
	// growth for facts follows a long covered history.
	capTok := maxTok
	if basis == CeilingWindow {
		if h := HistoryCeiling(plan.ReplacedTokens, plan.Target); h > maxTok {
			maxTok, basis = h, CeilingHistory
		}
	}
	r.maxTok = maxTok
	// The ceiling is on the summary node as the view counts it (its prefix
	// and message overhead included): the summarizer's text gets what the
	// node leaves of it.
	shell, err := estimate.Nodes(ctx, []*transcript.Node{{ID: transcript.SummaryIDPrefix + "x", Role: transcript.SummaryRole,
		Name: transcript.SummaryName, Content: transcript.TextContent(transcript.SummaryPrefix)}}, r.eopts)
	if err != nil {
		return summarize.Request{}, err
	}
	req := summarize.Request{Nodes: plan.Covered(r.in), MaxTokens: min(max(plan.ReplacedTokens/4, MinSummaryTokens), max(capTok-shell.Total, 1)), Encoding: r.before.Encoding}
	// The summary may grow past its cap to hold every fact and the pins,
	// up to the ceiling and to less than what it replaces (so it still
	// folds); the result reports the growth (docs/COMPACT.md §3).
	// A summary as large as what it replaces would not fold: the cap
	// stays under it even where the floor (MinSummaryTokens) is more.
	req.MaxTokens = max(min(req.MaxTokens, plan.ReplacedTokens-shell.Total-2), 1)
	req.Ceiling = max(min(maxTok, plan.ReplacedTokens)-shell.Total-2, req.MaxTokens)
	r.res.SummaryCap = req.MaxTokens + shell.Total
	r.res.SummaryCeiling, r.res.CeilingBasis = req.Ceiling+shell.Total, basis
	if plan.Previous != nil {
		req.Previous = strings.TrimPrefix(plan.Previous.Content.PlainText(), transcript.SummaryPrefix)
		if !strings.Contains(req.Previous, "## Objective") {
			// A client's own summary (imported) states no objective under
			// that heading: the first request it covers is on disk.
			if req.FirstRequest, err = firstRequest(g.S, plan.PreviousCovers); err != nil {
				return summarize.Request{}, err
			}
		}
	}
	if req.Facts, err = coveredFacts(g, plan); err != nil {
		return summarize.Request{}, err
	}
	if req.Pinned, r.pinIDs, err = pinnedTexts(g.S, plan.CoversIDs); err != nil {
		return summarize.Request{}, err
	}
	return req, nil
}

// DryRun is the planned result; it writes nothing. With an offline
// summarizer (summarize.Offline), cheap and deterministic, it also builds
// the candidate and runs the checks a real run would, so the plan does not
// promise a compaction that will be rejected.
func (r *Run) DryRun(ctx context.Context, req summarize.Request) (*Result, error) {
	res, plan := r.res, r.plan
	res.Outcome, res.Reason = OutcomePlanned, plan.Reason
	if plan.NoOp {
		res.Outcome = OutcomeNoOp
	}
	res.CoversIDs = plan.CoversIDs
	res.SummarisedCount = len(plan.CoversIDs)
	if plan.NoOp || !summarize.Offline(r.opts.Summarizer) {
		return res, nil
	}
	text, err := r.Summarize(ctx, req)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err == nil {
		var c *Candidate
		c, err = r.check(ctx, req, text, true)
		if c != nil {
			res.TokensAfter, res.SummaryTokens = c.after, c.tokens
			res.Survival, res.LedgerFacts = c.survival, c.ledger
		}
	}
	res.Checked, res.Rejected = true, err
	return res, nil
}

func (r *Run) ms() int64 { return r.now().Sub(r.start).Milliseconds() }

// Start records the compaction's start: compaction_started (held until
// the outcome is written with it, docs/COMPACT.md §5), with the source
// snapshot Persist re-checks. A plan that is a no-op needs no
// summarizer call and writes only its compaction_finished; the result's
// outcome is then no_op and started is false.
func (r *Run) Start(ctx context.Context) (started bool, err error) {
	res, plan, g := r.res, r.plan, r.g
	if plan.NoOp {
		res.Outcome, res.Reason = OutcomeNoOp, plan.Reason
		return false, r.event(ctx, transcript.CompactionEvent{
			Type: EventFinished, At: stamp(r.now), NoOp: true, Reason: plan.Reason,
			SummarisedCount: new(0), TokensBefore: r.before.Total, TokensAfter: r.before.Total,
			Summarizer: res.Summarizer, DurationMS: r.ms(),
		})
	}
	r.snap = snapshot{head: g.S.Meta.Head, active: g.S.Meta.ActiveSummaryID, covers: plan.CoversIDs, preds: map[string]string{}, pins: r.pinIDs}
	for _, id := range plan.CoversIDs {
		if ref, ok := g.S.RefByID(id); ok {
			r.snap.preds[id] = ref.Predecessor
		}
	}
	r.pending = &transcript.CompactionEvent{
		Type: EventStarted, At: stamp(r.now), Summarizer: res.Summarizer,
		TokensBefore: r.before.Total, Target: plan.Target, Covering: len(plan.CoversIDs),
	}
	return true, nil
}

// Summarize runs the summarizer on req, outside the lock, and makes sure
// every pinned text is in its summary verbatim.
func (r *Run) Summarize(ctx context.Context, req summarize.Request) (string, error) {
	return summarizeKeepingPins(ctx, r.opts.Summarizer, req)
}

// Validate builds the summary node from text and checks it in memory
// (not empty, within the ceiling, a strictly smaller rendered total).
func (r *Run) Validate(ctx context.Context, text string) (*Candidate, error) {
	c, err := r.validate(ctx, text, false)
	if c != nil {
		r.res.SummaryTokens = c.tokens
	}
	return c, err
}

func (r *Run) validate(ctx context.Context, text string, dry bool) (*Candidate, error) {
	eopts := r.eopts
	if dry {
		eopts.NoCache = true // a dry run writes nothing
	}
	return validate(ctx, r.view, r.plan, text, r.before.Total, r.maxTok, eopts, r.now)
}

// Fail records a failed compaction (compaction_failed: the summarizer
// failed or was cancelled, ErrCancelled, or its summary was rejected) and
// returns the *FailedError.
func (r *Run) Fail(ctx context.Context, cause error) (*Result, error) {
	res := r.res
	res.Outcome, res.Err = OutcomeFailed, cause
	if err := r.event(context.WithoutCancel(ctx), transcript.CompactionEvent{
		Type: EventFailed, At: stamp(r.now), Error: cause.Error(),
		Summarizer: res.Summarizer, DurationMS: r.ms(),
	}); err != nil {
		return res, err
	}
	return res, &FailedError{Err: cause}
}

// Persist re-checks the source under the session lock and appends the
// summary node and compaction_finished. A source that changed since
// Measure is the outcome changed (a *ChangedError, exit 4): nothing is
// written but the no-op compaction_finished that closes the started one.
func (r *Run) Persist(ctx context.Context, c *Candidate) (*Result, error) {
	res, plan, before := r.res, r.plan, r.before
	changed := ""
	w, err := store.Update(context.WithoutCancel(ctx), r.opts.Dir, r.opts.Store, func(tx *store.Tx) error {
		var err error
		if changed, err = r.snap.diff(tx.Session()); err != nil || changed != "" {
			return err
		}
		if err := r.writePending(tx); err != nil {
			return err
		}
		if _, err := tx.Append([]transcript.Node{c.node}, store.AppendOptions{}); err != nil {
			return err
		}
		res.TokensAfter = c.after
		return tx.AppendEvent(transcript.CompactionEvent{
			Type: EventFinished, At: stamp(r.now), SummaryID: c.node.ID,
			SummarisedCount: new(len(plan.CoversIDs)), TokensBefore: before.Total, TokensAfter: c.after,
			RawHistoryTokens: plan.ReplacedTokens, SummaryTokens: res.SummaryTokens, Survival: c.survival,
			CompactedTurns: plan.CompactedTurns, NewlyCovered: len(plan.NewIDs), Summarizer: res.Summarizer, DurationMS: r.ms(),
		})
	})
	res.Warnings = append(res.Warnings, w...)
	if err != nil {
		return res, err
	}
	if changed != "" {
		// A changed source is a no-op that can be retried (docs/COMPACT.md).
		// The finished event closes the started one; no node is written.
		res.Outcome = OutcomeChanged
		res.Err = &ChangedError{Msg: changed}
		if err := r.event(context.WithoutCancel(ctx), transcript.CompactionEvent{
			Type: EventFinished, At: stamp(r.now), NoOp: true, Reason: "changed: " + changed,
			SummarisedCount: new(0), TokensBefore: before.Total, TokensAfter: before.Total,
			Summarizer: res.Summarizer, DurationMS: r.ms(),
		}); err != nil {
			return res, err
		}
		return res, res.Err
	}
	res.Outcome = OutcomeSucceeded
	res.SummaryID = c.node.ID
	res.CoversIDs = plan.CoversIDs
	res.SummarisedCount = len(plan.CoversIDs)
	return res, nil
}

// event appends one event under the session lock, after the pending
// compaction_started; its warnings join the result's.
func (r *Run) event(ctx context.Context, ev transcript.CompactionEvent) error {
	w, err := store.Update(ctx, r.opts.Dir, r.opts.Store, func(tx *store.Tx) error {
		if err := r.writePending(tx); err != nil {
			return err
		}
		return tx.AppendEvent(ev)
	})
	r.res.Warnings = append(r.res.Warnings, w...)
	return err
}

// writePending appends the held compaction_started, once.
func (r *Run) writePending(tx *store.Tx) error {
	if r.pending == nil {
		return nil
	}
	if err := tx.AppendEvent(*r.pending); err != nil {
		return err
	}
	r.pending = nil
	return nil
}

// Compact is the steps composed for a real run: measure and plan, and
// unless --if-above is not reached or the plan is a no-op, start,
// summarize, validate and persist. The error is a *FailedError (exit 3),
// a *ChangedError (exit 4), or an input error; Result is non-nil whenever
// an outcome was reached.
func Compact(ctx context.Context, opts Options) (*Result, error) {
	return compose(ctx, opts, func(r *Run, ctx context.Context, req summarize.Request) (*Result, error) {
		if started, err := r.Start(ctx); err != nil || !started {
			return r.Result(), err
		}
		return r.Finish(ctx, req)
	})
}

// DryRun is the steps composed for --dry-run: measure and plan, and
// unless --if-above is not reached, Run.DryRun. Nothing is written, not
// even estimate's count cache.
func DryRun(ctx context.Context, opts Options) (*Result, error) {
	opts.Estimate.NoCache = true
	return compose(ctx, opts, (*Run).DryRun)
}

// compose is Measure, Triggered and Request, then last.
func compose(ctx context.Context, opts Options, last func(*Run, context.Context, summarize.Request) (*Result, error)) (*Result, error) {
	r, err := Measure(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if !r.Triggered() {
		return r.Result(), nil
	}
	req, err := r.Request(ctx)
	if err != nil {
		return nil, err
	}
	return last(r, ctx, req)
}

// Finish is the steps after Start: summarize, validate, persist, and Fail
// when the summarizer fails, is cancelled or its summary is rejected.
func (r *Run) Finish(ctx context.Context, req summarize.Request) (*Result, error) {
	text, err := r.Summarize(ctx, req)
	if ctx.Err() != nil {
		return r.Fail(ctx, ErrCancelled)
	}
	if err != nil {
		return r.Fail(ctx, err)
	}
	c, err := r.check(ctx, req, text, false)
	if c != nil {
		r.res.SummaryTokens = c.tokens
		r.res.Survival, r.res.LedgerFacts = c.survival, c.ledger
	}
	var rejected *RejectedError
	if errors.As(err, &rejected) {
		// Below --min-survival: nothing written, not even the held
		// compaction_started (docs/COMPACT.md §5).
		r.pending = nil
		r.res.Outcome, r.res.Err = OutcomeRejected, rejected
		return r.res, rejected
	}
	if err != nil {
		return r.Fail(ctx, err)
	}
	return r.Persist(ctx, c)
}
