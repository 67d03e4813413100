package cmd

import (
	"context"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/store"
)

type estimateOptions struct {
	IO   *report.IOStreams
	Dirs []string
	// Session is what each session is measured with; its Estimate.Model
	// is an explicit --model only (estimate.Options.ForSession).
	Session estimate.SessionOptions
	JSON    bool
	// FailAbove is the --fail-above percentage; < 0 means off.
	FailAbove float64
	Open      store.OpenOptions
	// Live maps a cache session to the transcript file it stands for.
	Live map[string]*live.Entry
	// Many: the arguments were a folder, a pattern or several (expandArgs):
	// each transcript file is opened inside its own parallel run (OpenArg),
	// an unreadable one is reported and the others go on, and a summary
	// line ends the text output.
	Many    bool
	OpenArg func(ctx context.Context, arg string) (string, *live.Entry, error)
	// LiveGC sets the collector for the imports of a many-file run and of
	// --tail.
	LiveGC func() (restore func())
	// The flags Session.Estimate is resolved from (Session.Head is
	// --head itself).
	ModelFlags   modelFlags
	CompactAtPct float64
	Nodes        bool
	NoCache      bool
	// Tail: each argument is a transcript file answered from its tail
	// where it can be (estimate_tail.go), through TailLive's cache.
	Tail     bool
	TailLive live.Options
	// ProjectLive reads the earlier sessions a transcript file's session
	// with no recorded request takes its first request's prefix from
	// (projectprefix; docs/ACCURACY.md, "The project's own sessions").
	ProjectLive live.Options
}

const estimateLong = `Measure how full the context window is: exact offline token counts of the
rendered view from HEAD (or --head) — the active summary plus the uncovered
tail, thinking and tool blocks included (docs/ESTIMATE.md: one measurement basis,
the same one compact and render --fit use).

The breakdown has one row per category (system, tool definitions, summary,
user, assistant, tool calls, tool results, thinking, images, and the chat
format's overhead); they sum to the total. ratio = total / window;
budget_pct = total / input budget, where input budget = window − output
reserve and the reserve is min(output capability, 16384, window/4) unless
--output-cap is given. should_compact is budget_pct ≥ --compact-at.

The model is --model, else the one the session records, else the config's
model. o200k_base and cl100k_base are exact; for models whose tokenizer is not
public (Claude, Gemini, open models) o200k_base is a stated proxy: measured on
real Claude Code transcripts it tracks Claude's own counts as well as
cl100k_base and Anthropic's published vocabulary (docs/ACCURACY.md), and
calibration fits the remaining rate. A name not in the table
resolves by family with one warning (ctxfold models lists the table); a window
the session records beats the table.

Where assistant nodes recorded usage.input_tokens, each such request is
re-estimated as it was sent, and a calibration is fitted: calibrated =
slope × total + unrecorded prefix, exact at the latest request. The prefix is
what the provider read that the transcript does not hold (a system prompt and
tools the client never recorded); the slope (method offset+slope) corrects a
proxy tokenizer and is used only where it predicted the session's own requests
better. With three steps between requests or more, the slope and a framing
rate are fitted together (method offset+slope+framing): the provider's framing
of each message and tool call, which the stated 3-token rule undercounts,
added for the framing since the latest request (framing_tokens). With fewer
steps, that framing is priced at the model's prior rate, fitted on real
sessions (method …+prior-framing), and a Claude model's slope starts at its
tokenizer's prior (prior_slope: Claude Opus 4.7 and later count more). Output
the transcript does not show but later requests read is added as
carried_tokens: Codex's reasoning within its turn, and the thinking Claude
Opus 4.7 and later return without text (or Claude 4 as a summary), until a
compaction. A model of another Claude tokenizer than the latest request's
(--model, or a /model command since) rescales the figure to its prior rate.
When a calibration exists, ratio, budget_pct, should_compact and
--fail-above use the calibrated total (budget_basis calibrated); raw_ratio,
raw_budget_pct and raw_should_compact keep the raw figures. --no-calibrate
turns calibration off and gates on the raw total. Before any request is
recorded, the prefix is the client's prior (what that client version sends
beside the transcript, method prior: …) or, for a transcript file, what the
first request of the project's newest earlier session beside it read beyond
its transcript (method project: …, the user's CLAUDE.md, MCP tools and hook
output included; a Claude Code sub-agent's from the project's earlier
sub-agent of its agent type and model, a fork's from its parent's latest
request; a Codex rollout's from the day folders up to its own); a Claude Code,
pi or OpenClaw session or Codex rollout with no earlier session of its
project, from the median of the user's three newest earlier sessions in
other projects (the folders beside its own in Claude Code's projects folder
or pi's sessions folder, an OpenClaw agent's other agents, Codex's day
folders). docs/ESTIMATE.md
documents the rules.

Models can be added or overridden in the config file:
  models:
    my-model: {window: 65536, max_output: 8192, encoding: o200k_base, provider: open}

Per-node counts are cached in DIR/cache/estimate and the last result in
DIR/cache/estimate.view (both safe to delete; --no-cache bypasses them). Several
sessions are measured in parallel and printed in argument order; with --json,
one object per line and per argument ({session, read_error} for a session that
cannot be read).

A client's transcript file is measured through its cache session
(docs/LIVE.md). A folder that is not a ctxfold session — such as
~/.claude/projects/<project>/ or ~/.codex/sessions/ — stands for the
transcripts under it (*.jsonl, Gemini CLI's chats/session-*.json; Claude Code's
sub-agent files go with their session), and a quoted pattern is expanded:
each file is imported and measured in its own parallel run, named by its file,
one --json line each ({file, read_error} for one that cannot be read, the
others go on), a bar on a terminal's stderr, and a summary line (how many, the
median and fullest budget, how many should compact, how many were compacted).
Nothing is written into the folder.

--tail answers each transcript file from its tail, as the status line does for
a big one (docs/LIVE.md, "The tail"): the calibrated occupancy only (tokens,
budget_pct, should_compact, the window, compactions; raw_tokens is 0), the
number the whole file gives, in a fraction of a second on a 100 MB Claude Code
transcript that was never imported. Where the tail cannot answer (another
client's file, no recorded request, right after a compaction) the whole file
is measured ("read": "full" instead of "tail").`

func newEstimateCmd(f *Factory, runF func(*estimateOptions) error) *cobra.Command {
	opts := &estimateOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "estimate DIR...",
		Short: "Token occupancy of the rendered view",
		Long:  estimateLong + exitStatusHelp("  --fail-above PCT exits 1 when a session's budget_pct (calibrated when a calibration exists) is at least PCT."),
		Example: `  ctxfold estimate ./s
  ctxfold estimate ./s --model claude-sonnet-4 --nodes
  ctxfold estimate ./s --window 32768 --output-cap 4096 --json
  ctxfold estimate sessions/* --fail-above 80 --json   # a CI gate
  ctxfold estimate ~/.claude/projects/-home-me-proj/  # every transcript of a project
  ctxfold estimate --tail ~/.claude/projects/-home-me-proj/SESSION.jsonl --json`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.resolveEstimate(cmd, args, opts); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			if opts.Tail {
				return runEstimateTail(cmd.Context(), opts)
			}
			return runEstimate(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	addModelFlags(cmd, &opts.ModelFlags)
	fl.StringVar(&opts.Session.Head, "head", "", "measure the view from this node instead of HEAD")
	fl.BoolVar(&opts.Nodes, "nodes", false, "also list every rendered node's count")
	fl.BoolVar(&opts.NoCache, "no-cache", false, "neither read nor write the count caches in DIR")
	fl.BoolVar(&opts.Tail, "tail", false, "answer a transcript file from its tail: the calibrated occupancy only, without importing it whole")
	fl.Float64Var(&opts.FailAbove, "fail-above", 0, "exit 1 when budget_pct ≥ PCT (calibrated when recorded usage allows; a CI gate)")
	fl.Float64Var(&opts.CompactAtPct, "compact-at", 100*estimate.DefaultCompactAt, "budget percentage at which should_compact is true")
	_ = cmd.RegisterFlagCompletionFunc("encoding", fixedCompletion(estimate.Encodings...))
	_ = cmd.RegisterFlagCompletionFunc("model", fixedCompletion(estimate.KnownModels()...))
	_ = cmd.RegisterFlagCompletionFunc("head", nodeIDFlagCompletion(f))
	addFileArgFlags(cmd, f)
	return cmd
}

// resolveEstimate is the file-argument step, then the model, the budget
// flags and the CI gate.
func (f *Factory) resolveEstimate(cmd *cobra.Command, args []string, opts *estimateOptions) error {
	if err := f.estimateArgs(cmd.Context(), args, opts); err != nil {
		return err
	}
	opts.ModelFlags.recordExplicit(cmd)
	est, fallback, err := f.resolveModelOptions(opts.ModelFlags)
	if err != nil {
		return err
	}
	so := &opts.Session
	so.DefaultModel = fallback
	if so.Head != "" && len(opts.Dirs) > 1 {
		return &UsageError{Err: errorf("--head names a node of one session; got %d sessions", len(opts.Dirs))}
	}
	if opts.CompactAtPct <= 0 || opts.CompactAtPct > 100 {
		return &UsageError{Err: errorf("--compact-at must be a percentage in (0, 100], got %v", opts.CompactAtPct)}
	}
	est.CompactAt = opts.CompactAtPct / 100
	est.NodeDetail, est.NoCache = opts.Nodes, opts.NoCache
	so.Estimate = est
	if !cmd.Flags().Changed("fail-above") {
		opts.FailAbove = -1
	} else if opts.FailAbove < 0 {
		return &UsageError{Err: errorf("--fail-above must be a percentage ≥ 0, got %v", opts.FailAbove)}
	}
	opts.JSON = f.IO.JSON
	so.Open = f.openOptions()
	return nil
}

// estimateArgs is the file-argument step: transcript files are measured
// through their cache sessions (docs/LIVE.md; --json names the file
// beside the session), or with --tail from their tails.
func (f *Factory) estimateArgs(ctx context.Context, args []string, opts *estimateOptions) error {
	if opts.Tail {
		return f.resolveEstimateTail(args, opts)
	}
	f.prepareLive = estimate.Warm
	sa, err := f.sessionArgs(ctx, args)
	if err != nil {
		return err
	}
	opts.Dirs, opts.Live, opts.Many = sa.Dirs, sa.Live, sa.Many
	if lo, err := f.liveOptions(); err == nil {
		opts.ProjectLive = lo // a session directory needs no cache: no error then
	}
	if opts.Many {
		opts.OpenArg = f.openArg
		opts.LiveGC = func() func() { return liveGC(f.Getenv) }
	}
	return nil
}

func validEncoding(e string) bool {
	for _, k := range estimate.Encodings {
		if e == k {
			return true
		}
	}
	return false
}

// estimateRun is one argument's outcome: the result, and the cache
// session entry when the argument was a transcript file.
type estimateRun struct {
	estimate.SessionResult
	entry *live.Entry
}

func runEstimate(ctx context.Context, opts *estimateOptions) error {
	// Many sessions take a while: a bar on a terminal's stderr (never with
	// --json or when piped).
	// The bar counts nodes, within and across sessions: each session adds
	// its own as it is opened, so one large session moves it too. Over a
	// folder of transcripts it counts files instead: an import moves no
	// node count until it is done.
	progress := report.NewProgress(opts.IO, "estimating", 0)
	defer progress.Done()
	so := opts.Session
	if opts.Many {
		progress.SetTotal(len(opts.Dirs))
		restore := opts.LiveGC()
		defer restore()
	} else {
		so.Estimate.Counting, so.Estimate.Counted = progress.AddTotal, progress.Add
	}
	// Sessions run in parallel (each also tokenizes on all cores).
	runs := fanOut(ctx, len(opts.Dirs), fanJobs(runtime.GOMAXPROCS(0)),
		func(i int) estimateRun { return estimateOne(ctx, opts, so, opts.Dirs[i], progress) },
		func(err error) estimateRun { return estimateRun{SessionResult: estimate.SessionResult{Err: err}} })
	var firstErr error
	var over []string
	out := &estimatePrinter{opts: opts, pal: report.NewPalette(opts.IO)}
	var sum fanSummary
	for i, dir := range opts.Dirs {
		o := runs.get(i)
		e := opts.Live[dir]
		if opts.Many {
			e = o.entry
		}
		sum.add(dir, e, o.Err, o.Result, o.Summaries)
		if ctx.Err() != nil {
			runs.wait()
			return ctx.Err()
		}
		if o.Err != nil && len(opts.Dirs) == 1 && !opts.JSON {
			progress.Done()
			printWarningLines(opts.IO.ErrOut, o.Warnings)
			runs.wait()
			return o.Err
		}
		if err := progress.Interrupt(func() error { return out.print(dir, e, o) }); err != nil {
			runs.wait()
			return err
		}
		if o.Err != nil {
			if firstErr == nil {
				firstErr = o.Err
			}
			continue
		}
		if opts.FailAbove >= 0 && o.Result.InputBudget > 0 && o.Result.BudgetPct >= opts.FailAbove {
			over = append(over, fmt.Sprintf("%s: budget %.1f%% (%s) ≥ --fail-above %g%%", dir, o.Result.BudgetPct, o.Result.BudgetBasis, opts.FailAbove))
		}
	}
	runs.wait()
	progress.Done()
	return finishEstimate(opts, &sum, firstErr, over)
}

// estimatePrinter prints each argument's outcome in argument order.
type estimatePrinter struct {
	opts    *estimateOptions
	pal     report.Palette
	printed int
}

// print writes one argument's warnings, then its result (or its error on
// stderr and, with --json, its read_error object).
func (p *estimatePrinter) print(dir string, e *live.Entry, o estimateRun) error {
	opts := p.opts
	printWarningLines(opts.IO.ErrOut, o.Warnings)
	if o.Err != nil {
		printError(opts.IO.ErrOut, o.Err)
		if opts.JSON {
			// One object per argument, always: a script reading the
			// stream sees which session failed and why.
			return report.JSON(opts.IO.Out, readErrorOf(dir, e, opts.Many, o.Err))
		}
		return nil
	}
	if p.printed > 0 && !opts.JSON {
		fmt.Fprintln(opts.IO.Out)
	}
	p.printed++
	if e != nil {
		o.Result.File = e.File
	}
	switch {
	case opts.JSON && e != nil:
		return report.JSON(opts.IO.Out, estimateLive{o.Result, e})
	case opts.JSON:
		return report.JSON(opts.IO.Out, o.Result)
	case opts.IO.StdoutTTY:
		return writeEstimateTTY(opts.IO, p.pal, o.Result, opts.Session.Estimate.CompactAt)
	}
	return writeEstimatePlain(opts.IO.Out, o.Result)
}

// finishEstimate ends the run: the summary line of a many-file run, then
// the exit status (a session that could not be measured, or one at or
// above --fail-above).
func finishEstimate(opts *estimateOptions, sum *fanSummary, firstErr error, over []string) error {
	if opts.Many {
		sum.print(opts.IO, opts.JSON)
	}
	if firstErr != nil {
		return &SilentError{Code: ExitCode(firstErr)}
	}
	if len(over) > 0 {
		for _, m := range over {
			fmt.Fprintf(opts.IO.ErrOut, "ctxfold: %s\n", m)
		}
		return &SilentError{Code: ExitCheckFailed}
	}
	return nil
}

// estimateOne measures one argument; in a many-file run it first brings a
// transcript file's cache session up to date, in this run.
func estimateOne(ctx context.Context, opts *estimateOptions, so estimate.SessionOptions, arg string, progress *report.Progress) estimateRun {
	if !opts.Many {
		res := estimate.Session(ctx, arg, so)
		withProjectPrefix(ctx, opts.Live[arg], &res, opts.ProjectLive, so)
		return estimateRun{SessionResult: res}
	}
	defer progress.Add(1)
	dir, e, err := opts.OpenArg(ctx, arg)
	if err != nil {
		return estimateRun{SessionResult: estimate.SessionResult{Err: err}}
	}
	res := estimate.Session(ctx, dir, so)
	res.Err = entryError(res.Err, e)
	withProjectPrefix(ctx, e, &res, opts.ProjectLive, so)
	return estimateRun{SessionResult: res, entry: e}
}

// estimateReadError is estimate's --json object for a session it could
// not measure (as verify's read_error); file names the transcript file
// when the argument was one.
type estimateReadError struct {
	File      string `json:"file,omitempty"`
	Session   string `json:"session,omitempty"`
	ReadError string `json:"read_error"`
}

// readErrorOf: in a many-file run an argument that is a transcript file
// may fail before it has a cache session; it is named as the file.
func readErrorOf(arg string, e *live.Entry, many bool, err error) estimateReadError {
	switch {
	case e != nil:
		return estimateReadError{File: e.File, Session: e.Session, ReadError: err.Error()}
	case many && live.IsTranscriptFile(arg):
		return estimateReadError{File: arg, ReadError: err.Error()}
	}
	return estimateReadError{Session: arg, ReadError: err.Error()}
}

// estimateLive is estimate's --json object for a transcript file given as
// the argument: the result and, under "live", how its cache session was
// brought up to date (update, parsed_bytes: docs/LIVE.md).
type estimateLive struct {
	*estimate.Result
	Live *live.Entry `json:"live"`
}
