package compact

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/summarize"
	"github.com/ctxfold/ctxfold/transcript"
	"github.com/ctxfold/ctxfold/verify"
)

// Outcomes (seed 001 §02), plus changed (the source moved underneath) and
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

// Options configure one compaction.
type Options struct {
	Dir   string
	Open  transcript.OpenOptions
	Store transcript.WriteOptions
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
	// this (0: always).
	IfAbove float64
	// DryRun plans and writes nothing.
	DryRun     bool
	Summarizer summarize.Summarizer
	// Now is the clock for event times and durations (nil: time.Now).
	Now func() time.Time
	// OnStart is called once compaction_started is written, right before
	// the summarizer runs (the "Compacting context…" message).
	OnStart func()
}

// Result is what a compaction did.
type Result struct {
	Outcome string
	// Reason says why a no-op was one.
	Reason string
	Plan   *Plan
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
	Warnings   []transcript.Warning
	// Err is the failure (Outcome failed or changed).
	Err error
	// Checked is true when a dry run also built and validated the
	// candidate summary (only with an offline summarizer: Offline);
	// Rejected is then the reason it would be rejected, nil when it would
	// be accepted, and TokensAfter/SummaryTokens are its figures.
	Checked  bool
	Rejected error
}

// FailedError is a failed compaction: the summarizer failed or was
// cancelled, or its summary was rejected. Nothing was written but the
// compaction_failed event.
type FailedError struct{ Err error }

func (e *FailedError) Error() string { return e.Err.Error() }
func (e *FailedError) Unwrap() error { return e.Err }

// ExitCode is 3 (cmd/exit.go).
func (e *FailedError) ExitCode() int { return 3 }

// ChangedError: HEAD, the active summary or the covered segment changed
// while the summarizer ran; nothing was written and the run can be retried.
type ChangedError struct{ Msg string }

func (e *ChangedError) Error() string {
	return "session changed during compaction: " + e.Msg + "; nothing written"
}
func (e *ChangedError) Hint() string { return "run the compaction again" }

// ExitCode is 4 (cmd/exit.go).
func (e *ChangedError) ExitCode() int { return 4 }

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

// ExitCode is 2 (cmd/exit.go): the input is bad, as for append.
func (e *BrokenError) ExitCode() int { return 2 }

// Rejection reasons of a summary (seed 000 §4 step 4).
var (
	ErrEmptySummary     = errors.New("the summarizer returned an empty summary")
	ErrOversized        = errors.New("the summary is over the size ceiling")
	ErrNonReducing      = errors.New("the summary does not make the rendered context smaller")
	ErrCancelled        = errors.New("cancelled")
	errNoSummarizerConf = errors.New("compact: no summarizer")
)

// snapshot is what the plan was made from, re-checked under the lock.
type snapshot struct {
	head, active string
	covers       []string
	preds        map[string]string
}

// Compact runs the pipeline on one session: freeze the rendered view at
// HEAD, plan, summarize outside the lock, validate the candidate in
// memory, then — under the session lock — re-check the source and persist
// exactly one summary node plus the events. It never moves HEAD and never
// rewrites a node. The error is a *FailedError (exit 3), a *ChangedError
// (exit 4), or an input error; Result is non-nil whenever an outcome was
// reached.
func Compact(ctx context.Context, opts Options) (*Result, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	start := now()
	if opts.Summarizer == nil {
		return nil, errNoSummarizerConf
	}
	g, err := dag.Open(opts.Dir, opts.Open)
	if err != nil {
		return nil, err
	}
	defer g.S.Close()
	// A summary written into a session that already fails verify inherits
	// (and can add to) its faults — a splice mismatch makes the next
	// summary not extend the active one. Refuse it as append refuses a
	// broken graph; warnings do not block. verify is linear in the session.
	if err := checkSession(ctx, opts.Dir, g.S); err != nil {
		return nil, err
	}
	res := &Result{Summarizer: opts.Summarizer.Name(), Warnings: g.S.Warnings}
	eopts := opts.Estimate.ForSession(g.S.Meta, opts.DefaultModel)
	res.Model = eopts.Model
	if r, ok := estimate.ResolveModel(eopts.Model, eopts.Models); ok && r.Warning() != "" {
		res.Warnings = append(res.Warnings, transcript.Warning{File: opts.Dir, Msg: r.Warning()})
	}
	if eopts.Model == "" && eopts.Window <= 0 && (opts.KeepTokens <= 0 || opts.IfAbove > 0) {
		// Without a window there is neither a target nor a budget
		// percentage: refuse as `ctxfold estimate` does, rather than fold to
		// a floor nobody asked for or never fire --if-above.
		return nil, fmt.Errorf("%s: %w", opts.Dir, &estimate.UnknownModelError{})
	}
	view, err := render.Build(g, "", false)
	if err != nil {
		return nil, err
	}
	nodes, err := view.LoadNodes()
	if err != nil {
		return nil, err
	}
	// seed 001 §01: tokens_before is the same total `ctxfold estimate`
	// prints for this view; the per-node breakdown sizes the turns.
	detail := eopts
	detail.NodeDetail = true
	// The total is the one `ctxfold estimate` prints; calibration against
	// recorded usage decides only the budget percentage --if-above reads
	// (and is reported for the view after), never the plan's token figures.
	// A dry run writes nothing, not even estimate's count cache.
	detail.NoCache = detail.NoCache || opts.DryRun
	before, err := estimate.View(ctx, view, detail)
	if err != nil {
		return nil, err
	}
	res.TokensBefore, res.TokensAfter = before.Total, before.Total
	res.BudgetPct, res.BudgetBasis = before.BudgetPct, before.BudgetBasis
	res.Correction = before.Calibration.Correction()
	target := opts.KeepTokens
	if target <= 0 {
		w, err := window(eopts)
		if err != nil {
			return nil, err
		}
		target = Target(w)
	}
	tokens, err := perNode(ctx, nodes, before, eopts)
	if err != nil {
		return nil, err
	}
	in := PlanInput{Nodes: nodes, Tokens: tokens, Total: before.Total, Target: target}
	plan := MakePlan(in)
	res.Plan = plan
	if opts.IfAbove > 0 && res.BudgetPct < opts.IfAbove {
		// Not triggered: no event, like an auto-compaction that did not fire.
		res.Outcome, res.Reason = OutcomeNoOp, ReasonBelowThreshold
		return res, nil
	}
	maxTok := opts.MaxSummaryTokens
	if maxTok <= 0 {
		w, err := window(eopts)
		if err != nil {
			return nil, err
		}
		maxTok = SummaryCeiling(w)
	}
	// seed 000 §4 step 3: the summarizer reads the previous summary plus
	// every newly covered turn; it runs outside the lock.
	// The ceiling is on the summary node as the view counts it (its prefix
	// and message overhead included): the summarizer's text gets what the
	// node leaves of it.
	shell, err := estimate.Nodes(ctx, []*transcript.Node{{ID: transcript.SummaryIDPrefix + "x", Role: transcript.SummaryRole,
		Name: transcript.SummaryName, Content: transcript.TextContent(transcript.SummaryPrefix)}}, eopts)
	if err != nil {
		return nil, err
	}
	req := summarize.Request{Nodes: plan.Covered(in), MaxTokens: min(max(plan.ReplacedTokens/4, MinSummaryTokens), max(maxTok-shell.Total, 1)), Encoding: before.Encoding}
	if plan.Previous != nil {
		req.Previous = strings.TrimPrefix(plan.Previous.Content.PlainText(), transcript.SummaryPrefix)
		if !strings.Contains(req.Previous, "## Objective") {
			// A client's own summary (imported) states no objective under
			// that heading: the first request it covers is on disk.
			if req.FirstRequest, err = firstRequest(g.S, plan.Previous.CoversIDs()); err != nil {
				return nil, err
			}
		}
	}
	if req.Recovered, err = recovered(g, plan, req.Previous); err != nil {
		return nil, err
	}
	if req.Pinned, err = pinnedTexts(g.S, plan.CoversIDs); err != nil {
		return nil, err
	}
	if opts.DryRun {
		res.Outcome, res.Reason = OutcomePlanned, plan.Reason
		if plan.NoOp {
			res.Outcome = OutcomeNoOp
		}
		res.CoversIDs = plan.CoversIDs
		res.SummarisedCount = len(plan.CoversIDs)
		if !plan.NoOp && summarize.Offline(opts.Summarizer) {
			// An offline summarizer is cheap and deterministic: build the
			// candidate and run the same checks a real run would, so the
			// plan does not promise a compaction that will be rejected.
			text, err := summarizeKeepingPins(ctx, opts.Summarizer, req)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if err == nil {
				var c *candidate
				dry := eopts
				dry.NoCache = true // a dry run writes nothing
				c, err = validate(ctx, view, plan, text, before.Total, maxTok, dry, now)
				if c != nil {
					res.TokensAfter, res.SummaryTokens = c.after, c.tokens
				}
			}
			res.Checked, res.Rejected = true, err
		}
		return res, nil
	}
	ms := func() int64 { return now().Sub(start).Milliseconds() }
	if plan.NoOp {
		// seed 001 §02: a no-op known before the summarizer call emits no
		// started event and makes no call.
		res.Outcome, res.Reason = OutcomeNoOp, plan.Reason
		w, err := appendEvents(ctx, opts, transcript.CompactionEvent{
			Type: EventFinished, At: stamp(now), NoOp: true, Reason: plan.Reason,
			SummarisedCount: new(0), TokensBefore: before.Total, TokensAfter: before.Total,
			Summarizer: res.Summarizer, DurationMS: ms(),
		})
		res.Warnings = append(res.Warnings, w...)
		return res, err
	}
	snap := snapshot{head: g.S.Meta.Head, active: g.S.Meta.ActiveSummaryID, covers: plan.CoversIDs, preds: map[string]string{}}
	for _, id := range plan.CoversIDs {
		if r, ok := g.S.RefByID(id); ok {
			snap.preds[id] = r.Predecessor
		}
	}
	w, err := appendEvents(ctx, opts, transcript.CompactionEvent{
		Type: EventStarted, At: stamp(now), Summarizer: res.Summarizer,
		TokensBefore: before.Total, Target: target, Covering: len(plan.CoversIDs),
	})
	res.Warnings = append(res.Warnings, w...)
	if err != nil {
		return res, err
	}
	fail := func(cause error) (*Result, error) {
		res.Outcome, res.Err = OutcomeFailed, cause
		w, err := appendEvents(context.WithoutCancel(ctx), opts, transcript.CompactionEvent{
			Type: EventFailed, At: stamp(now), Error: cause.Error(),
			Summarizer: res.Summarizer, DurationMS: ms(),
		})
		res.Warnings = append(res.Warnings, w...)
		if err != nil {
			return res, err
		}
		return res, &FailedError{Err: cause}
	}
	if opts.OnStart != nil {
		opts.OnStart()
	}

	text, err := summarizeKeepingPins(ctx, opts.Summarizer, req)
	if ctx.Err() != nil {
		return fail(ErrCancelled)
	}
	if err != nil {
		return fail(err)
	}
	c, err := validate(ctx, view, plan, text, before.Total, maxTok, eopts, now)
	if c != nil {
		res.SummaryTokens = c.tokens
	}
	if err != nil {
		return fail(err)
	}
	summary, after := c.node, c.after

	changed := ""
	w, err = transcript.Update(context.WithoutCancel(ctx), opts.Dir, opts.Store, func(tx *transcript.Tx) error {
		s := tx.Session()
		if changed = snap.diff(s); changed != "" {
			return nil
		}
		if _, err := tx.Append([]transcript.Node{summary}, transcript.AppendOptions{}); err != nil {
			return err
		}
		res.TokensAfter = after
		return tx.AppendEvent(transcript.CompactionEvent{
			Type: EventFinished, At: stamp(now), SummaryID: summary.ID,
			SummarisedCount: new(len(plan.CoversIDs)), TokensBefore: before.Total, TokensAfter: after,
			RawHistoryTokens: plan.ReplacedTokens, SummaryTokens: res.SummaryTokens,
			CompactedTurns: plan.CompactedTurns, NewlyCovered: len(plan.NewIDs), Summarizer: res.Summarizer, DurationMS: ms(),
		})
	})
	res.Warnings = append(res.Warnings, w...)
	if err != nil {
		return res, err
	}
	if changed != "" {
		// seed 000 §4: a changed source is a no-op that can be retried. The
		// finished event closes the started one; no node is written.
		res.Outcome = OutcomeChanged
		res.Err = &ChangedError{Msg: changed}
		w, err := appendEvents(context.WithoutCancel(ctx), opts, transcript.CompactionEvent{
			Type: EventFinished, At: stamp(now), NoOp: true, Reason: "changed: " + changed,
			SummarisedCount: new(0), TokensBefore: before.Total, TokensAfter: before.Total,
			Summarizer: res.Summarizer, DurationMS: ms(),
		})
		res.Warnings = append(res.Warnings, w...)
		if err != nil {
			return res, err
		}
		return res, res.Err
	}
	res.Outcome = OutcomeSucceeded
	res.SummaryID = summary.ID
	res.CoversIDs = plan.CoversIDs
	res.SummarisedCount = len(plan.CoversIDs)
	return res, nil
}

// candidate is a validated summary node with its figures.
type candidate struct {
	node transcript.Node
	// after is the rendered total with the summary substituted
	// (tokens_after); tokens the summary node's own count.
	after, tokens int
}

// validate builds the summary node from text and applies seed 000 §4
// step 4: not empty, within the ceiling, and a strictly smaller rendered
// total. The candidate is returned with its figures even when rejected
// (nil only when it could not be measured).
func validate(ctx context.Context, view *render.View, plan *Plan, text string, before, maxTok int, eopts estimate.Options, now func() time.Time) (*candidate, error) {
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
	summary.ID = transcript.NewID(&summary)
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
	c := &candidate{node: summary, after: after.Total}
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

// summarizeKeepingPins runs s and makes sure every pinned text is in the
// summary verbatim: a summarizer that did not quote one (a model may
// paraphrase) gets a "## Pinned" section appended with the rest.
func summarizeKeepingPins(ctx context.Context, s summarize.Summarizer, req summarize.Request) (string, error) {
	text, err := s.Summarize(ctx, req)
	if err != nil || len(req.Pinned) == 0 {
		return text, err
	}
	var missing []string
	for _, p := range req.Pinned {
		if !strings.Contains(text, p) {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		text = strings.TrimRight(text, "\n") + "\n\n## Pinned\n" + strings.Join(missing, "\n\n") + "\n"
	}
	return text, nil
}

// recoveredKinds are the fact kinds a re-compaction gives back to the
// summarizer: the ones docs/COMPACT.md §7's acceptance table measures,
// the user's requests and URLs.
var recoveredKinds = map[audit.Kind]bool{audit.KindRequest: true, audit.KindInstruction: true,
	audit.KindPath: true, audit.KindCommand: true, audit.KindError: true, audit.KindURL: true}

// recovered returns the facts the summarizer would not see otherwise,
// oldest first: those of the turns the previous summary covers that its
// text lacks, and those of the caller subtrees (sub-agents) of every
// covered turn, which are not on the spine the summarizer reads
// (audit.Extract, audit.Subtrees, audit.Matcher; docs/COMPACT.md §3).
func recovered(g *dag.Graph, plan *Plan, prevText string) ([]summarize.Fact, error) {
	s := g.S
	load := func(idx []int) ([]*transcript.Node, error) {
		out := make([]*transcript.Node, 0, len(idx))
		for _, i := range idx {
			n, err := s.Node(i)
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		}
		return out, nil
	}
	var prevIdx, allIdx []int
	for k, id := range plan.CoversIDs {
		i, ok := s.Lookup(id)
		if !ok {
			return nil, fmt.Errorf("%s: covered node %q does not exist", s.Dir, id)
		}
		if k < len(plan.CoversIDs)-len(plan.NewIDs) {
			prevIdx = append(prevIdx, i)
		}
		allIdx = append(allIdx, i)
	}
	nodes, err := load(prevIdx)
	if err != nil {
		return nil, err
	}
	spawned, err := load(audit.Subtrees(g, allIdx))
	if err != nil {
		return nil, err
	}
	m := audit.NewMatcher(prevText)
	var out []summarize.Fact
	for _, f := range audit.ExtractKinds(nodes, spawned, recoveredKinds) {
		if !m.Has(f) {
			out = append(out, summarize.Fact{Kind: string(f.Kind), Text: f.Text})
		}
	}
	return out, nil
}

// firstRequest is the text of the first request the user typed among ids
// (transcript.Node.IsRealRequest), "" when there is none.
func firstRequest(s *transcript.Session, ids []string) (string, error) {
	for _, id := range ids {
		n, err := s.NodeByID(id)
		if err != nil {
			return "", err
		}
		if n.IsRealRequest() {
			if t := strings.TrimSpace(n.Content.PlainText()); t != "" {
				return t, nil
			}
		}
	}
	return "", nil
}

// pinnedTexts are the texts of the pinned nodes among the ids the new
// summary covers — the previous summary's included, so a pin survives
// every later compaction (ctxfold pin; docs/FORMAT.md §8) — for the
// summary to quote verbatim. A pinned node with no text of its own gives
// its tool calls' commands or its results' text instead.
func pinnedTexts(s *transcript.Session, covers []string) ([]string, error) {
	pins, err := s.Pins()
	if err != nil || len(pins) == 0 {
		return nil, err
	}
	var out []string
	for _, id := range covers {
		if !pins[id] {
			continue
		}
		n, err := s.NodeByID(id)
		if err != nil {
			return nil, err
		}
		out = append(out, audit.PinnedTexts(n)...)
	}
	return out, nil
}

// checkSession runs the verify engine and returns a *BrokenError for the
// first error finding, or nil.
func checkSession(ctx context.Context, dir string, s *transcript.Session) error {
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

// diff says what changed since the plan was made, or "".
func (sn snapshot) diff(s *transcript.Session) string {
	if s.Meta.Head != sn.head {
		return fmt.Sprintf("HEAD moved from %q to %q", sn.head, s.Meta.Head)
	}
	if s.Meta.ActiveSummaryID != sn.active {
		return fmt.Sprintf("the active summary changed from %q to %q", sn.active, s.Meta.ActiveSummaryID)
	}
	for _, id := range sn.covers {
		r, ok := s.RefByID(id)
		if !ok || r.Predecessor != sn.preds[id] {
			return fmt.Sprintf("covered node %q changed", id)
		}
	}
	return ""
}

func appendEvents(ctx context.Context, opts Options, evs ...transcript.CompactionEvent) ([]transcript.Warning, error) {
	return transcript.Update(ctx, opts.Dir, opts.Store, func(tx *transcript.Tx) error {
		for _, ev := range evs {
			if err := tx.AppendEvent(ev); err != nil {
				return err
			}
		}
		return nil
	})
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
