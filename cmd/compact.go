package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/compact"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/summarize"
	"github.com/ctxfold/ctxfold/transcript"
)

type compactOptions struct {
	IO   *report.IOStreams
	JSON bool
	Lang report.Lang
	// Compact holds everything but the summarizer, which runCompact builds
	// from Summarizers.
	Compact     compact.Options
	Summarizers summarizerSettings
	// DryRun plans (and checks an offline summary) and writes nothing.
	DryRun bool
	// File is the transcript file Compact.Dir is the cache session of (a
	// --dry-run on a file); "" for a session directory.
	File string
	// Summarizer, when set (tests), replaces the one named.
	Summarizer summarize.Summarizer
	// ModelFlags and LangFlag are the flags Compact.Estimate and Lang are
	// resolved from.
	ModelFlags modelFlags
	LangFlag   string
}

const compactLong = `Compact a session: fold its older turns into one summary node that the
rendered view substitutes for them (docs/FORMAT.md §4, docs/COMPACT.md).
Nothing is deleted, no node is rewritten and HEAD does not move: 'ctxfold
render --raw' still shows every turn.

The kept tail is as many whole turns as fit the retained-token target (10% of
the model window, clamped to 8,000–40,000 tokens; --keep-tokens overrides). It
starts at a user message, never separates a tool call from its results, and
holds at least four conversational messages where the history has them. A
session already at or below the target, or with nothing new since the last
compaction, is a no-op: no summarizer call, no node. Compacting again folds the
previous summary together with the newly covered turns into one summary.
--dry-run writes nothing; with the extractive summarizer it also builds the
summary and reports whether it would be accepted; other summarizers are not
run (their size checks happen only on a real run).
A session that fails 'ctxfold verify' is refused before planning.

Summarizers:
  extractive  offline and deterministic (default): the first request, state,
              files inspected and modified, commands, decisions, rejected
              approaches, constraints quoted verbatim, errors, open questions
              and the latest request
  openai      any Chat Completions endpoint (--base-url, --summary-model; the
              key is read from CTXFOLD_API_KEY or OPENAI_API_KEY)
  exec        --summarizer-cmd CMD runs through 'sh -c' with the prompt on
              stdin and prints the summary on stdout

The summary spends its budget by value: the facts 'ctxfold audit' checks
(requests, instructions, errors, commands, paths, URLs, identifiers,
numbers) come first, one line each with the ids of the nodes they came
from, the prose last; pinned texts are quoted on top of them, never instead.
It may grow past its cap, up to --max-summary-tokens, to hold them; the
report says by how much. A model's summary (openai, exec) is audited before
it is stored, and the facts it dropped are appended as a fact ledger. The
report prints the survival per kind of fact (also in --json and in the
compaction_finished event); --min-survival PCT rejects a summary that keeps
less than PCT percent of any kind (outcome rejected, exit 3, nothing
written).

The summary is validated before anything is written: empty, oversized or
non-reducing summaries are rejected. If HEAD, the active summary or the covered
turns change while the summarizer runs, nothing is written (exit 4). Events go
to events.jsonl: compaction_started, compaction_finished, compaction_failed.

The model resolves as in estimate: --model, else the session's, else the
configured one; tokens_before is estimate's total under the same --encoding,
--window, --max-output and --output-cap. With no model and no window there is
no target: give --keep-tokens (or --model/--window); --if-above needs a budget.
docs/COMPACT.md states every rule.`

// compactExit is compact's part of EXIT STATUS.
const compactExit = `  compact: 0 succeeded or no-op (--if-above not reached included), 2 no model
  or window to size the target or budget, or the session fails 'ctxfold verify'
  (nothing written), 3 failed or rejected (nothing written), 4 the session changed during
  compaction (nothing written; run it again)`

func newCompactCmd(f *Factory, runF func(*compactOptions) error) *cobra.Command {
	opts := &compactOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "compact DIR",
		Short: "Fold older turns into one rolling summary, offline",
		Long:  compactLong + exitStatusHelp(compactExit),
		Example: `  ctxfold compact ./s
  ctxfold compact ./s --dry-run
  ctxfold compact ./s --keep-tokens 2000 --json
  ctxfold compact ./s --if-above 80            # only when the budget is 80% full
  ctxfold compact ./s --min-survival 95 --json # CI: every kind of fact ≥ 95%
  ctxfold compact ./s --summarizer exec --summarizer-cmd 'llm -m local-model'
  CTXFOLD_API_KEY=… ctxfold compact ./s --summarizer openai --summary-model gpt-4o-mini`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.resolveCompact(cmd, args, opts); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runCompact(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	addSummarizerFlags(cmd, &opts.Summarizers)
	fl.IntVar(&opts.Compact.KeepTokens, "keep-tokens", 0, "retained-token target for the kept tail, at least 1 (default: 10% of the window, 8000–40000)")
	fl.IntVar(&opts.Compact.MaxSummaryTokens, "max-summary-tokens", 0, "ceiling on the summary's size (default: 5% of the window, 4000–16000)")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "print the plan (covered ids, kept ids, tokens, target) and whether the extractive summary would be accepted; write nothing")
	fl.Float64Var(&opts.Compact.IfAbove, "if-above", 0, "compact only when the view fills at least this percentage of the input budget")
	fl.Float64Var(&opts.Compact.MinSurvival, "min-survival", 0, "reject (exit 3, nothing written) a summary that keeps less than this percentage of any kind of fact")
	addModelFlags(cmd, &opts.ModelFlags)
	fl.StringVar(&opts.LangFlag, "lang", "", "language of the messages: en or zh (default from LC_ALL/LANG)")
	_ = cmd.RegisterFlagCompletionFunc("lang", fixedCompletion("en", "zh"))
	addFileArgFlags(cmd, f)
	return cmd
}

// resolveCompact checks the flags and resolves the summarizer, the model
// and the language; a --dry-run on a transcript file reads its cache
// session (the file-argument step).
func (f *Factory) resolveCompact(cmd *cobra.Command, args []string, opts *compactOptions) error {
	opts.Compact.Dir = args[0]
	opts.JSON = f.IO.JSON
	opts.Summarizers.Warn = f.IO.ErrOut
	if err := opts.Summarizers.resolve(cmd, f.Getenv); err != nil {
		return err
	}
	if opts.Compact.MinSurvival < 0 || opts.Compact.MinSurvival > 100 {
		return &UsageError{Err: fmt.Errorf("--min-survival is a percentage from 0 to 100, got %v", opts.Compact.MinSurvival)}
	}
	// A dry run reads a transcript file through its cache session
	// (docs/LIVE.md); a real compaction writes, so it needs a
	// session of the user's own.
	if live.IsTranscriptFile(opts.Compact.Dir) {
		if !opts.DryRun {
			return &UsageError{Err: fmt.Errorf("%s is a file: compact writes a summary node, so it needs a session directory (ctxfold import %s -o DIR first); --dry-run takes the file", opts.Compact.Dir, opts.Compact.Dir)}
		}
		var err error
		if opts.Compact.Dir, opts.File, err = f.sessionArg(cmd.Context(), opts.Compact.Dir); err != nil {
			return err
		}
	}
	if err := opts.checkSizes(cmd.Flags().Changed("keep-tokens")); err != nil {
		return err
	}
	// The model resolves as in estimate: --model, else the session's
	// (compact.Compact reads it), else the configured default.
	opts.ModelFlags.recordExplicit(cmd)
	var err error
	if opts.Compact.Estimate, opts.Compact.DefaultModel, err = f.resolveModelOptions(opts.ModelFlags); err != nil {
		return err
	}
	if opts.Lang, err = compactLang(opts.LangFlag, f.Getenv); err != nil {
		return err
	}
	opts.Compact.Open = f.openOptions()
	opts.Compact.Store = f.writeOptions("compact")
	opts.Compact.Now = f.Now
	return nil
}

// checkSizes rejects the token targets and the --if-above percentage a
// compaction cannot use; keepGiven says --keep-tokens was on the command
// line.
func (opts *compactOptions) checkSizes(keepGiven bool) error {
	c := &opts.Compact
	if keepGiven && c.KeepTokens == 0 {
		// Zero would fold everything but the latest turn — and a
		// default that silently applied instead would mislead.
		return &UsageError{Err: errors.New("--keep-tokens 0: the kept tail needs a positive target (omit the flag for the default, 10% of the window)")}
	}
	if c.KeepTokens < 0 || c.MaxSummaryTokens < 0 {
		return &UsageError{Err: errors.New("--keep-tokens and --max-summary-tokens must not be negative")}
	}
	if c.IfAbove < 0 || c.IfAbove > 100 {
		return &UsageError{Err: fmt.Errorf("--if-above is a percentage from 0 to 100, got %v", c.IfAbove)}
	}
	return nil
}

// compactLang is --lang (a setting), else the locale's language.
func compactLang(flag string, getenv func(string) string) (report.Lang, error) {
	if flag == "" {
		return report.LangFromLocale(getenv), nil
	}
	lang, err := report.ParseLang(flag)
	if err != nil {
		return lang, &UsageError{Err: fmt.Errorf("--lang: %w", err)}
	}
	return lang, nil
}

func (o *compactOptions) summarizer() (summarize.Summarizer, error) {
	if o.Summarizer != nil {
		return o.Summarizer, nil
	}
	return o.Summarizers.build(o.Compact.Estimate.Model)
}

// compactError is a failed or interrupted compaction, printed in the
// standard one-line form ("ctxfold: error: context compaction failed: …")
// with the docs/COMPACT.md §5 message text.
type compactError struct {
	msg, hint string
	// err is the *compact.FailedError or *compact.ChangedError, which
	// cmd/exit.go maps to the exit code.
	err error
}

func (e *compactError) Error() string { return e.msg }
func (e *compactError) Hint() string  { return e.hint }
func (e *compactError) Unwrap() error { return e.err }

// lowerFirst starts a message with a lower-case letter, as errors do (the
// message table's "Context compaction failed: …", docs/COMPACT.md §5, becomes "context compaction
// failed: …"; Chinese is unchanged).
func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToLower(r)) + s[n:]
}

func runCompact(ctx context.Context, opts *compactOptions) error {
	s, err := opts.summarizer()
	if err != nil {
		return err
	}
	co := opts.Compact
	// One reporter for the whole run: counting the view (seconds on a
	// 100k-node session), then summarizing, then checking the candidate.
	progress := report.NewProgress(opts.IO, "compacting: counting tokens", 0)
	defer progress.Done()
	co.Estimate.Counting, co.Estimate.Counted = progress.AddTotal, progress.Add
	ws := &waitingSummarizer{Summarizer: s, progress: progress}
	co.Summarizer = ws
	run := compact.Compact
	if opts.DryRun {
		run = compact.DryRun
	} else if !opts.JSON && opts.IO.ProgressEnabled() {
		// A real run calls the summarizer once, right after
		// compaction_started is recorded: "Compacting context…" then.
		ws.started = func() {
			_ = progress.Interrupt(func() error {
				_, err := fmt.Fprintln(opts.IO.ErrOut, report.CompactionStarted(opts.Lang))
				return err
			})
		}
	}
	res, err := run(ctx, co)
	progress.Done()
	if res != nil {
		printWarnings(opts.IO.ErrOut, fileWarnings(res.Warnings, co.Dir, opts.File))
	}
	var failed *compact.FailedError
	var changed *compact.ChangedError
	var rejected *compact.RejectedError
	switch {
	case errors.As(err, &rejected):
		msg := "Context compaction rejected: " + rejected.Error()
		if opts.JSON {
			if jerr := writeCompactJSON(opts.IO.Out, res, co, opts, msg); jerr != nil {
				return jerr
			}
		} else {
			writeSurvival(opts.IO.ErrOut, res)
		}
		return &compactError{msg: lowerFirst(msg), hint: rejected.Hint(), err: err}
	case errors.As(err, &failed):
		msg := report.CompactionFailed(opts.Lang, failed.Err.Error())
		if opts.JSON {
			if jerr := writeCompactJSON(opts.IO.Out, res, co, opts, msg); jerr != nil {
				return jerr
			}
		}
		return &compactError{msg: lowerFirst(msg), err: err}
	case errors.As(err, &changed):
		msg := report.CompactionChanged(opts.Lang, changed.Msg)
		if opts.JSON {
			if jerr := writeCompactJSON(opts.IO.Out, res, co, opts, msg); jerr != nil {
				return jerr
			}
		}
		return &compactError{msg: lowerFirst(msg), hint: changed.Hint(), err: err}
	case err != nil:
		return err
	}
	msg := compactMessage(opts.Lang, res, co.IfAbove)
	if opts.JSON {
		return writeCompactJSON(opts.IO.Out, res, co, opts, msg)
	}
	if res.Outcome == compact.OutcomePlanned || (opts.DryRun && res.Outcome == compact.OutcomeNoOp) {
		return writePlan(opts.IO.Out, res, msg)
	}
	fmt.Fprintln(opts.IO.Out, msg)
	if res.Outcome == compact.OutcomeSucceeded {
		fmt.Fprintf(opts.IO.Out, "summary: %s\n", res.SummaryID)
		writeSurvival(opts.IO.Out, res)
	} else if res.Reason == compact.ReasonNothingNew {
		fmt.Fprintf(opts.IO.ErrOut, "ctxfold: note: %s\n", res.Reason)
	}
	return nil
}

// fileWarnings: a warning about a transcript file's cache session (dir)
// names the file.
func fileWarnings(ws []store.Warning, dir, file string) []store.Warning {
	for i := range ws {
		if file != "" && ws[i].File == dir {
			ws[i].File = file
		}
	}
	return ws
}

func compactMessage(lang report.Lang, res *compact.Result, ifAbove float64) string {
	switch res.Outcome {
	case compact.OutcomeSucceeded:
		newly := res.SummarisedCount
		if res.Plan != nil {
			newly = len(res.Plan.NewIDs)
		}
		return report.CompactionFinished(lang, res.SummarisedCount, newly, res.TokensBefore, res.TokensAfter)
	case compact.OutcomeNoOp:
		// docs/COMPACT.md §5's "already compacted" is only for a previous summary
		// with nothing new after it; the other no-ops say what happened.
		switch res.Reason {
		case compact.ReasonBelowThreshold:
			return report.CompactionBelowThreshold(lang, res.BudgetPct, ifAbove)
		case compact.ReasonBelowTarget:
			// With a summary of ctxfold's own in the view, a history
			// within the target is the already-compacted case; a summary
			// imported from the client's own compaction is not (issue 44).
			if res.Plan != nil && (res.Plan.Previous == nil || res.ClientSummary) {
				return report.CompactionBelowTarget(lang, res.TokensBefore, res.Plan.Target)
			}
		case compact.ReasonNoBoundary:
			return report.CompactionOneTurn(lang)
		}
		return report.CompactionNoOp(lang)
	case compact.OutcomePlanned:
		msg := fmt.Sprintf("would cover %d older messages", res.SummarisedCount)
		if res.Checked && res.Rejected != nil {
			msg += ", but the " + res.Summarizer + " summary would be rejected: " + res.Rejected.Error()
		}
		return msg
	}
	return ""
}

// idRange is a count and the first and last ids: the covered list of a
// large session runs to hundreds of kilobytes on one line (--json has it
// whole, as covers_ids).
func idRange(ids []string) string {
	switch len(ids) {
	case 0:
		return "none"
	case 1:
		return "1 node, " + render.TextSafe(ids[0])
	}
	return fmt.Sprintf("%s nodes, %s … %s (all of them with --json)", report.Thousands(len(ids)), render.TextSafe(ids[0]), render.TextSafe(ids[len(ids)-1]))
}

func writePlan(w io.Writer, res *compact.Result, msg string) error {
	p := res.Plan
	fmt.Fprintf(w, "dry run: %s\n", msg)
	if res.Reason != "" {
		fmt.Fprintf(w, "reason: %s\n", res.Reason)
	}
	fmt.Fprintf(w, "tokens before: %d\n", res.TokensBefore)
	fmt.Fprintf(w, "target: %d\n", p.Target)
	if !p.NoOp {
		fmt.Fprintf(w, "covered: %s\n", idRange(p.CoversIDs))
		fmt.Fprintf(w, "newly covered turns: %d\n", p.CompactedTurns)
		fmt.Fprintf(w, "replaced tokens: %d\n", p.ReplacedTokens)
		fmt.Fprintf(w, "kept: %s\n", render.TextSafe(strings.Join(p.KeptIDs, " ")))
		fmt.Fprintf(w, "kept tokens: %d\n", p.TailTokens)
		fmt.Fprintf(w, "summary check: %s\n", summaryCheck(res))
		writeSurvival(w, res)
	}
	return nil
}

// writeSurvival prints the survival of the summary's facts per kind, the
// facts the ledger gave back, and the summary's growth past its cap
// (docs/COMPACT.md §5): a CI job can read them without running audit.
func writeSurvival(w io.Writer, res *compact.Result) {
	sv := res.Survival
	if sv == nil {
		return
	}
	var kinds []string
	for _, k := range audit.Kinds {
		if ks := sv.Kinds[string(k)]; ks.Total > 0 {
			kinds = append(kinds, fmt.Sprintf("%s %d/%d", k, ks.Kept, ks.Total))
		}
	}
	fmt.Fprintf(w, "survival: %d of %d facts (%.1f%%)", sv.Kept, sv.Total, sv.SurvivalPct)
	if len(kinds) > 0 {
		fmt.Fprintf(w, ": %s", strings.Join(kinds, ", "))
	}
	fmt.Fprintln(w)
	if res.LedgerFacts > 0 {
		fmt.Fprintf(w, "fact ledger: %d facts the summarizer left out were appended\n", res.LedgerFacts)
	}
	if g := res.Growth(); g > 0 {
		fmt.Fprintf(w, "summary size: %d tokens, %d past its cap of %d (the ceiling allows growth for facts and pinned texts)\n", res.SummaryTokens, g, res.SummaryCap)
	}
	if res.CeilingBasis == compact.CeilingHistory {
		fmt.Fprintf(w, "summary ceiling: %d tokens, grown with the covered history (5%% of the %d tokens it replaces, within the retained-token target of %d)\n",
			res.SummaryCeiling, res.Plan.ReplacedTokens, res.Plan.Target)
	}
}

// summaryCheck says what the dry run knows about the summary: with an
// offline summarizer it was built and checked as a real run would; any
// other runs only on a real run, where the size checks happen.
func summaryCheck(res *compact.Result) string {
	switch {
	case !res.Checked:
		return fmt.Sprintf("not done: the %s summarizer runs only on a real run, which rejects an empty, oversized or non-reducing summary (exit 3)", res.Summarizer)
	case res.Rejected != nil:
		return fmt.Sprintf("would be rejected (exit 3): %v", res.Rejected)
	}
	return fmt.Sprintf("would be accepted: summary %d tokens, %d → %d tokens", res.SummaryTokens, res.TokensBefore, res.TokensAfter)
}

func writeCompactJSON(w io.Writer, res *compact.Result, co compact.Options, opts *compactOptions, msg string) error {
	dryRun := opts.DryRun
	if res == nil {
		res = &compact.Result{Outcome: compact.OutcomeFailed}
	}
	covers := res.CoversIDs
	if covers == nil {
		covers = []string{}
	}
	obj := compactResult{
		Outcome: res.Outcome, SummaryID: res.SummaryID, SummarisedCount: res.SummarisedCount,
		CoversIDs: covers, TokensBefore: res.TokensBefore, TokensAfter: res.TokensAfter,
		Message: msg, Session: co.Dir, File: opts.File, Summarizer: res.Summarizer, Reason: res.Reason,
	}
	if res.BudgetBasis != "" {
		obj.BudgetPct, obj.BudgetBasis = &res.BudgetPct, res.BudgetBasis
	}
	if res.Survival != nil {
		growth := res.Growth()
		obj.Survival, obj.LedgerFacts = res.Survival, &res.LedgerFacts
		obj.SummaryTokens, obj.SummaryCapTokens, obj.SummaryGrowthTokens = &res.SummaryTokens, &res.SummaryCap, &growth
		obj.SummaryCeilingTokens, obj.SummaryCeilingBasis = &res.SummaryCeiling, res.CeilingBasis
	}
	if co.MinSurvival > 0 {
		obj.MinSurvival = &co.MinSurvival
	}
	if c := res.Correction; c != nil {
		// The view after keeps the slope fitted before and is anchored on
		// the client's prefix, as estimate anchors it afterwards.
		// Before is estimate's own figure; a run that changed nothing
		// reports it after too (issue 44: 880 before, 795 after, 881 in
		// estimate for one unchanged session).
		before, after := c.Apply(res.TokensBefore), c.ApplyCompacted(res.TokensAfter)
		if res.CalibratedBefore > 0 {
			before = res.CalibratedBefore
		}
		if res.Outcome != compact.OutcomeSucceeded && res.Outcome != compact.OutcomePlanned {
			after = before
		}
		obj.Calibration, obj.CalibratedTokensBefore, obj.CalibratedTokensAfter = c, &before, &after
	}
	// newly_covered_count: how many of covers_ids this run folded (the
	// rest the previous summary already covered).
	if res.Plan != nil && (res.Outcome == compact.OutcomeSucceeded || res.Outcome == compact.OutcomePlanned) {
		obj.NewlyCoveredCount = len(res.Plan.NewIDs)
	}
	if dryRun && res.Plan != nil {
		kept := res.Plan.KeptIDs
		if kept == nil {
			kept = []string{}
		}
		obj.DryRun, obj.KeptIDs, obj.Target = true, kept, &res.Plan.Target
		if res.Outcome == compact.OutcomePlanned {
			// summary_checked: the offline summarizer's candidate was
			// built; summary_accepted and rejection say how it fared.
			obj.SummaryChecked = &res.Checked
			if res.Checked {
				accepted := res.Rejected == nil
				obj.SummaryAccepted, obj.SummaryTokens = &accepted, &res.SummaryTokens
				if res.Rejected != nil {
					obj.Rejection = res.Rejected.Error()
				}
			}
		}
	}
	return report.JSON(w, obj)
}

// compactResult is compact's --json object; the dry-run fields are set
// only with --dry-run.
type compactResult struct {
	Outcome         string `json:"outcome"`
	SummaryID       string `json:"summary_id"`
	SummarisedCount int    `json:"summarised_count"`
	// NewlyCoveredCount is how many of CoversIDs this run folded.
	NewlyCoveredCount int      `json:"newly_covered_count"`
	CoversIDs         []string `json:"covers_ids"`
	TokensBefore      int      `json:"tokens_before"`
	TokensAfter       int      `json:"tokens_after"`
	Message           string   `json:"message"`
	Session           string   `json:"session"`
	// File is the transcript file Session is the cache session of (a
	// --dry-run on a file, docs/LIVE.md); absent otherwise.
	File            string   `json:"file,omitempty"`
	Summarizer      string   `json:"summarizer"`
	Reason          string   `json:"reason,omitempty"`
	DryRun          bool     `json:"dry_run,omitempty"`
	KeptIDs         []string `json:"kept_ids,omitempty"`
	Target          *int     `json:"target,omitempty"`
	SummaryChecked  *bool    `json:"summary_checked,omitempty"`
	SummaryAccepted *bool    `json:"summary_accepted,omitempty"`
	SummaryTokens   *int     `json:"summary_tokens,omitempty"`
	Rejection       string   `json:"rejection,omitempty"`
	// survival is the survival of the covered turns' facts in the view
	// with the summary, per kind (docs/COMPACT.md §6's kinds), with
	// ledger_facts (facts the ledger appended), summary_cap_tokens and
	// summary_growth_tokens (past the cap): set once a summary was checked.
	Survival            *transcript.FactSurvival `json:"survival,omitempty"`
	LedgerFacts         *int                     `json:"ledger_facts,omitempty"`
	SummaryCapTokens    *int                     `json:"summary_cap_tokens,omitempty"`
	SummaryGrowthTokens *int                     `json:"summary_growth_tokens,omitempty"`
	// summary_ceiling_tokens is how far the summary could grow for facts
	// and pins, summary_ceiling_basis why: max-summary-tokens, window, or
	// covered history (docs/COMPACT.md §3).
	SummaryCeilingTokens *int     `json:"summary_ceiling_tokens,omitempty"`
	SummaryCeilingBasis  string   `json:"summary_ceiling_basis,omitempty"`
	MinSurvival          *float64 `json:"min_survival,omitempty"`
	// budget_pct is on the basis budget_basis names (calibrated when the
	// session recorded usage); calibration is the correction applied, and
	// the calibrated figures keep its prefix and slope after compaction.
	BudgetPct              *float64             `json:"budget_pct,omitempty"`
	BudgetBasis            string               `json:"budget_basis,omitempty"`
	Calibration            *estimate.Correction `json:"calibration,omitempty"`
	CalibratedTokensBefore *int                 `json:"calibrated_tokens_before,omitempty"`
	CalibratedTokensAfter  *int                 `json:"calibrated_tokens_after,omitempty"`
}

// waitingSummarizer shows a spinner with the elapsed time on a terminal's
// stderr while the summarizer works (a model call can take a minute).
type waitingSummarizer struct {
	summarize.Summarizer
	progress *report.Progress
	// started, when set, is called as the summarizer starts.
	started func()
}

// Unwrap lets summarize.Offline see the summarizer underneath.
func (w *waitingSummarizer) Unwrap() summarize.Summarizer { return w.Summarizer }

func (w *waitingSummarizer) Summarize(ctx context.Context, req summarize.Request) (string, error) {
	if w.started != nil {
		w.started()
	}
	w.progress.Restart("summarizing ("+w.Name()+")", 0)
	defer w.progress.Restart("compacting: checking the summary", 0)
	return w.Summarizer.Summarize(ctx, req)
}
