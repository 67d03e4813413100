package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/fit"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/store"
)

type renderOptions struct {
	// File is the transcript file Dir is the cache session of
	// (docs/LIVE.md); "" for a session directory argument.
	File   string
	IO     *report.IOStreams
	Dir    string
	Head   string
	Raw    bool
	Format render.Format
	JSON   bool
	Open   store.OpenOptions
	// Fit builds a request that fits the model's window (render --fit);
	// JSONReport names the file its report goes to.
	Fit        bool
	FitOptions fit.Options
	JSONReport string
	// FitDefaultModel is the env/config model, used when neither --model
	// nor the session names one (resolveModel).
	FitDefaultModel string
	// Diff prints the raw view beside the rendered one (render --diff),
	// its tokens counted with DiffEstimate.
	Diff              bool
	DiffEstimate      estimate.Options
	DiffExplicitModel bool
	// The flags the view, FitOptions and DiffEstimate are resolved from.
	FormatName      string
	ModelFlags      modelFlags
	Summarizers     summarizerSettings
	Margin          marginValue
	MaxSummaryCalls int
	SummaryDeadline time.Duration
}

const renderLong = `Print the rendered view from HEAD (or --head): the predecessor spine with the
active summary substituted for the segment it covers (docs/FORMAT.md §4), or the raw
spine when the branch does not hold the whole covered segment. --raw ignores
summaries: the pre-compaction view.

Formats: text (for people), ids (one id a line, root first), jsonl (the stored
nodes), openai (a Chat Completions messages array), anthropic (a Messages API
body {system, messages}), responses (the input items of a Responses API
request: developer messages, function calls and outputs, a client's own
compaction as the items it sent), gemini (a generateContent body
{systemInstruction, contents}). Output is deterministic. With --json, a description
of the view (ids, whether a summary substitutes) is printed instead.

--fit prints a request that fits the model by estimate's count: exact where the
model's tokenizer is public (OpenAI), by a stated proxy for Claude and Gemini
(encoding_is_proxy in the report; keep --margin large enough for the proxy's
error, docs/ACCURACY.md). Input budget = window −
output reserve − --margin, where the reserve is min(output capability, 16384,
window/4) unless --output-cap is given (an explicit cap that cannot be
honoured is an error, never reduced). The model is --model, else the
session's, else the configured one, as for estimate and compact. When over budget, in order: (1) text-only
results of completed tool groups are summarized, oldest first; (2) older
complete history becomes one request-local checkpoint — user messages and the
latest assistant segment stay verbatim; (3) the oldest eligible history is
snipped. The session is never written (summaries are cached in DIR/cache/fit/,
which is safe to delete). At most --max-summary-calls summary calls and a
--summary-deadline per preparation (every HTTP attempt of the openai
summarizer counts as a call). If the protected content alone does not
fit, nothing is printed and the exit status is 5. --json-report FILE lists
what was changed beside the request on stdout; --json prints that report
alone, on stdout.

--diff compares the raw view of the branch with the rendered one: the ids the
active summary folds away, the summary that stands in for them, and the token
delta, counted by estimate (--model, else the session's, else the configured
one). --json prints it as one object.`

func newRenderCmd(f *Factory, runF func(*renderOptions) error) *cobra.Command {
	opts := &renderOptions{IO: f.IO, Margin: marginValue(fit.DefaultMargin)}
	cmd := &cobra.Command{
		Use:   "render DIR",
		Short: "Print what the model reads next turn",
		Long:  renderLong + exitStatusHelp(""),
		Example: `  ctxfold render ./s
  ctxfold render ./s --format ids
  ctxfold render ./s --raw --format ids      # the pre-compaction view
  ctxfold render ./s --head n12 --format openai > body.json
  ctxfold render ./s --diff                   # what the summary folds, and the token delta
  ctxfold render ./s --fit --model gpt-4o --format openai --json-report fit.json > body.json`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.resolveRender(cmd, args, opts); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runRender(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Head, "head", "", "render from this node instead of HEAD")
	fl.BoolVar(&opts.Raw, "raw", false, "ignore summaries (the pre-compaction view)")
	fl.StringVar(&opts.FormatName, "format", "text", "text, ids, jsonl, openai, anthropic, responses or gemini")
	_ = cmd.RegisterFlagCompletionFunc("format", fixedCompletion("text", "ids", "jsonl", "openai", "anthropic", "responses", "gemini"))
	_ = cmd.RegisterFlagCompletionFunc("head", nodeIDFlagCompletion(f))
	fl.BoolVar(&opts.Fit, "fit", false, "print a request that fits the model's window (request-local; the session is not written)")
	fl.BoolVar(&opts.Diff, "diff", false, "compare the raw view with the rendered one: folded ids, the summary standing in, the token delta")
	addModelFlags(cmd, &opts.ModelFlags)
	fl.Var(&opts.Margin, "margin", "safety margin in tokens kept free with --fit; auto is 1% of the window, at least 256")
	addSummarizerFlags(cmd, &opts.Summarizers)
	fl.IntVar(&opts.MaxSummaryCalls, "max-summary-calls", fit.DefaultMaxCalls, "--fit: most summary calls per preparation")
	fl.DurationVar(&opts.SummaryDeadline, "summary-deadline", fit.DefaultDeadline, "--fit: deadline for all summary calls of one preparation")
	fl.StringVar(&opts.JSONReport, "json-report", "", "--fit: write the report of what was changed to FILE")
	addFileArgFlags(cmd, f)
	return cmd
}

// resolveRender is the file-argument step, then the options of the view
// and of --diff or --fit.
func (f *Factory) resolveRender(cmd *cobra.Command, args []string, opts *renderOptions) error {
	// A transcript file is read through its cache session (docs/LIVE.md).
	var err error
	if opts.Dir, opts.File, err = f.sessionArg(cmd.Context(), args[0]); err != nil {
		return err
	}
	if opts.Format, err = render.ParseFormat(opts.FormatName); err != nil {
		return &UsageError{Err: err}
	}
	opts.JSON = f.IO.JSON
	opts.Open = f.openOptions()
	opts.ModelFlags.recordExplicit(cmd)
	if opts.Diff {
		return f.diffOptions(cmd.Flags().Changed, opts)
	}
	return f.fitOptions(cmd, opts)
}

// fitOnlyFlags make no sense without --fit.
var fitOnlyFlags = []string{"model", "encoding", "window", "max-output", "output-cap", "margin", "summarizer", "summarizer-cmd",
	"base-url", "summary-model", "max-summary-calls", "summary-deadline", "json-report"}

// diffOptions: --diff takes the model flags (its tokens are estimate's) and
// nothing that shapes another output; changed says which flags the
// command line gave.
func (f *Factory) diffOptions(changed func(string) bool, opts *renderOptions) error {
	for _, name := range []string{"fit", "raw", "format", "margin", "summarizer", "summarizer-cmd", "base-url", "summary-model", "max-summary-calls", "summary-deadline", "json-report"} {
		if changed(name) {
			return &UsageError{Err: errorf("--diff and --%s exclude each other", name)}
		}
	}
	est, fallback, err := f.resolveModelOptions(opts.ModelFlags)
	if err != nil {
		return err
	}
	opts.DiffEstimate, opts.FitDefaultModel, opts.DiffExplicitModel = est, fallback, opts.ModelFlags.ExplicitModel
	return nil
}

func (f *Factory) fitOptions(cmd *cobra.Command, opts *renderOptions) error {
	if !opts.Fit {
		for _, name := range fitOnlyFlags {
			if cmd.Flags().Changed(name) {
				return &UsageError{Err: errorf("--%s needs --fit", name)}
			}
		}
		return nil
	}
	if opts.Format == render.FormatJSONL {
		return &UsageError{Err: errors.New("--fit prints openai, anthropic, gemini, text or ids")}
	}
	est, fallback, err := f.resolveModelOptions(opts.ModelFlags)
	if err != nil {
		return err
	}
	if opts.MaxSummaryCalls <= 0 || opts.SummaryDeadline <= 0 {
		return &UsageError{Err: errors.New("--max-summary-calls and --summary-deadline must be positive")}
	}
	opts.Summarizers.Warn = f.IO.ErrOut
	if err := opts.Summarizers.resolve(cmd, f.Getenv); err != nil {
		return err
	}
	summarizer, err := opts.Summarizers.build(est.Model)
	if err != nil {
		return err
	}
	opts.FitDefaultModel = fallback
	opts.FitOptions = fit.Options{Estimate: est, Margin: int(opts.Margin), Summarizer: summarizer,
		MaxCalls: opts.MaxSummaryCalls, Deadline: opts.SummaryDeadline}
	return nil
}

func runRender(ctx context.Context, opts *renderOptions) error {
	g, err := dag.Open(opts.Dir, opts.Open)
	if err != nil {
		return err
	}
	defer g.S.Close()
	printWarnings(opts.IO.ErrOut, g.S.Warnings)
	if opts.Diff {
		return runRenderDiff(ctx, opts, g)
	}
	view, err := render.Build(g, opts.Head, opts.Raw)
	if err != nil {
		return err
	}
	if opts.Fit {
		return runFit(ctx, opts, g, view)
	}
	if opts.JSON {
		summary := ""
		if view.Summarized() {
			summary = g.ID(view.Substitution.Summary)
		}
		head := ""
		if view.Head >= 0 {
			head = g.ID(view.Head)
		}
		return report.JSON(opts.IO.Out, renderResult{File: opts.File, Session: opts.Dir, Head: head, Raw: opts.Raw, Summarized: view.Summarized(),
			SummaryID: summary, IDs: view.IDs()})
	}
	if len(view.Indexes) == 0 && opts.IO.StderrTTY && (opts.Format == render.FormatText || opts.Format == render.FormatIDs) {
		// An empty result is not a failure; say so to a person only.
		fmt.Fprintf(opts.IO.ErrOut, "%s: the session is empty; nothing to show\n", opts.Dir)
	}
	return render.WriteStyled(opts.IO.Out, view, opts.Format, textStyle(opts.IO))
}

// textStyle colours the text format's node headers by role when colour is
// on (a terminal without NO_COLOR, or --color always).
func textStyle(ios *report.IOStreams) render.Style {
	if !ios.ColorEnabled() {
		return render.Style{}
	}
	p := report.NewPalette(ios)
	return render.Style{Header: func(label, line string) string {
		switch label {
		case "user":
			return p.Cyan(line)
		case "assistant":
			return p.Green(line)
		case "tool":
			return p.Dim(line)
		case "system":
			return p.Magenta(line)
		}
		return p.Bold(p.Yellow(line)) // the summary stands out
	}}
}

// runFit prints a request that fits, or nothing (exit 5). A script must
// never be handed an over-budget body, so stdout is written only after the
// fit succeeded.
func runFit(ctx context.Context, opts *renderOptions, g *dag.Graph, view *render.View) error {
	fo := opts.FitOptions
	fo.Estimate = fo.Estimate.ForSession(g.S.Meta, opts.FitDefaultModel).ForView(view)
	if w := fo.Estimate.AssumedWarning(); w != "" {
		warnf(opts.IO.ErrOut, "%s", w)
	}
	warnFamily(opts.IO.ErrOut, fo.Estimate)
	if !fo.Estimate.NoCalibrate {
		// The budget is what the provider will count: calibrate on the
		// session's recorded usage (estimate's figure) first.
		// (estimate's count cache in the session directory makes this
		// cheap after the first run.)
		if res, err := estimate.View(ctx, view, fo.Estimate); err == nil {
			fo.Estimate.Correction = res.Calibration.Correction()
		}
	}
	fo.Session, fo.File = opts.Dir, opts.File
	fo.CacheDir = g.S.Dir
	nodes, err := view.LoadNodes()
	if err != nil {
		return err
	}
	fitted, rep, err := fit.Fit(ctx, nodes, fo)
	if rep != nil {
		if rerr := writeFitReport(opts, rep); rerr != nil && err == nil {
			err = rerr
		}
	}
	if err != nil {
		return err
	}
	if opts.JSON && opts.JSONReport == "" {
		// --json: the report is the one object on stdout, as render
		// --json prints the view's shape, not its text (the body with the
		// report beside it: --json-report FILE).
		return nil
	}
	if len(rep.Transformations) == 0 {
		// Already fits: exactly render's output.
		return render.Write(opts.IO.Out, view, opts.Format)
	}
	return render.WriteNodes(opts.IO.Out, fitted, opts.Format)
}

func writeFitReport(opts *renderOptions, rep *fit.Report) error {
	switch {
	case opts.JSONReport != "":
		return report.WriteFileAtomic(opts.JSONReport, func(w io.Writer) error { return report.JSON(w, rep) })
	case opts.JSON:
		return report.JSON(opts.IO.Out, rep)
	}
	return nil
}

// renderResult is render's --json object: the view's shape, not its text.
type renderResult struct {
	// File is the transcript file Session is the cache session of
	// (docs/LIVE.md); absent for a session directory argument.
	File       string   `json:"file,omitempty"`
	Session    string   `json:"session"`
	Head       string   `json:"head"`
	Raw        bool     `json:"raw"`
	Summarized bool     `json:"summarized"`
	SummaryID  string   `json:"summary_id"`
	IDs        []string `json:"ids"`
}

// marginValue is --margin: a token count, or "auto" (fit.DefaultMargin),
// which is also how its default reads in the help.
type marginValue int

func (m *marginValue) String() string {
	if int(*m) == fit.DefaultMargin {
		return "auto"
	}
	return strconv.Itoa(int(*m))
}

func (m *marginValue) Set(s string) error {
	if s == "auto" {
		*m = marginValue(fit.DefaultMargin)
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("want a token count of 0 or more, or auto; got %q", s)
	}
	*m = marginValue(n)
	return nil
}

func (m *marginValue) Type() string { return "tokens" }
