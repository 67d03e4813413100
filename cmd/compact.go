package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/compact"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/report"
)

type compactOptions struct {
	IO   *report.IOStreams
	JSON bool
	Lang report.Lang
	// Compact holds everything but the summarizer, which runCompact builds
	// from the fields below.
	Compact        compact.Options
	SummarizerName string
	SummarizerCmd  string
	BaseURL        string
	SummaryModel   string
	// APIKey comes from CTXFOLD_API_KEY or OPENAI_API_KEY, never a flag.
	APIKey string
	// Summarizer, when set (tests), replaces the one named.
	Summarizer compact.Summarizer
}

func newCompactCmd(f *Factory) *cobra.Command {
	opts := &compactOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "compact DIR",
		Short: "Fold older turns into one rolling summary, offline",
		Long: `Compact a session: fold its older turns into one summary node that the
rendered view substitutes for them (seed §1–§4). Nothing is deleted, no node is
rewritten and HEAD does not move: 'ctxfold render --raw' still shows every turn.

The kept tail is as many whole turns as fit the retained-token target (10% of
the model window, clamped to 8,000–40,000 tokens; --keep-tokens overrides). It
starts at a user message, never separates a tool call from its results, and
holds at least four conversational messages where the history has them. A
session already at or below the target, or with nothing new since the last
compaction, is a no-op: no summarizer call, no node. Compacting again folds the
previous summary together with the newly covered turns into one summary.

Summarizers:
  extractive  offline and deterministic (default): the first request, state,
              files inspected and modified, commands, decisions, rejected
              approaches, constraints quoted verbatim, errors, open questions
              and the latest request
  openai      any Chat Completions endpoint (--base-url, --summary-model; the
              key is read from CTXFOLD_API_KEY or OPENAI_API_KEY)
  exec        --summarizer-cmd CMD runs through 'sh -c' with the prompt on
              stdin and prints the summary on stdout

The summary is validated before anything is written: empty, oversized or
non-reducing summaries are rejected. If HEAD, the active summary or the covered
turns change while the summarizer runs, nothing is written (exit 4). Events go
to events.jsonl: compaction_started, compaction_finished, compaction_failed.
docs/COMPACT.md states every rule.` + exitStatusHelp(`  compact: 0 succeeded or no-op, 3 failed (nothing written), 4 the session
  changed during compaction (nothing written; run it again)`),
		Example: `  ctxfold compact ./s
  ctxfold compact ./s --dry-run
  ctxfold compact ./s --keep-tokens 2000 --json
  ctxfold compact ./s --if-above 80            # only when the budget is 80% full
  ctxfold compact ./s --summarizer exec --summarizer-cmd 'llm -m local-model'
  CTXFOLD_API_KEY=… ctxfold compact ./s --summarizer openai --summary-model gpt-4o-mini`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c := f.Config
			opts.Compact.Dir = args[0]
			opts.JSON = c.GetBool("json")
			opts.SummarizerName = c.GetString("summarizer")
			opts.SummarizerCmd = c.GetString("summarizer-cmd")
			opts.BaseURL = c.GetString("base-url")
			opts.SummaryModel = c.GetString("summary-model")
			switch opts.SummarizerName {
			case "extractive", "openai":
				if opts.SummarizerCmd != "" && cmd.Flags().Changed("summarizer-cmd") {
					return &UsageError{Err: errors.New("--summarizer-cmd needs --summarizer exec")}
				}
			case "exec":
				if strings.TrimSpace(opts.SummarizerCmd) == "" {
					return &UsageError{Err: errors.New("--summarizer exec needs --summarizer-cmd")}
				}
			default:
				return &UsageError{Err: fmt.Errorf("--summarizer must be extractive, openai or exec, got %q", opts.SummarizerName)}
			}
			opts.Compact.KeepTokens = c.GetInt("keep-tokens")
			opts.Compact.MaxSummaryTokens = c.GetInt("max-summary-tokens")
			opts.Compact.IfAbove = c.GetFloat64("if-above")
			opts.Compact.DryRun = c.GetBool("dry-run")
			if opts.Compact.KeepTokens < 0 || opts.Compact.MaxSummaryTokens < 0 {
				return &UsageError{Err: errors.New("--keep-tokens and --max-summary-tokens must not be negative")}
			}
			if opts.Compact.IfAbove < 0 || opts.Compact.IfAbove > 100 {
				return &UsageError{Err: fmt.Errorf("--if-above is a percentage from 0 to 100, got %v", opts.Compact.IfAbove)}
			}
			// The model resolves as in estimate: --model, else the session's,
			// else the configured default; config models: extend the table.
			e := estimate.Options{Window: c.GetInt("window")}
			if cmd.Flags().Changed("model") {
				e.Model, _ = cmd.Flags().GetString("model")
			} else {
				opts.Compact.DefaultModel = c.GetString("model")
			}
			if e.Window < 0 {
				return &UsageError{Err: errors.New("--window must not be negative")}
			}
			if c.IsSet("models") {
				models := map[string]estimate.Model{}
				if err := c.UnmarshalKey("models", &models); err != nil {
					return &UsageError{Err: fmt.Errorf("config models: %v", err)}
				}
				e.Models = models
			}
			opts.Compact.Estimate = e
			if l := c.GetString("lang"); l != "" {
				lang, err := report.ParseLang(l)
				if err != nil {
					return &UsageError{Err: fmt.Errorf("--lang: %w", err)}
				}
				opts.Lang = lang
			} else {
				opts.Lang = report.LangFromLocale(f.Getenv)
			}
			opts.APIKey = f.Getenv("CTXFOLD_API_KEY")
			if opts.APIKey == "" {
				opts.APIKey = f.Getenv("OPENAI_API_KEY")
			}
			opts.Compact.Open = f.openOptions()
			opts.Compact.Store = f.writeOptions("compact")
			opts.Compact.Now = f.Now
			return runCompact(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.String("summarizer", "extractive", "extractive, openai or exec")
	fl.String("summarizer-cmd", "", "shell command for --summarizer exec (prompt on stdin, summary on stdout)")
	fl.Int("keep-tokens", 0, "retained-token target for the kept tail (default: 10% of the window, 8000–40000)")
	fl.Int("max-summary-tokens", compact.DefaultMaxSummaryTokens, "ceiling on the summary's size")
	fl.Bool("dry-run", false, "print the plan (covered ids, kept ids, tokens, target) and write nothing")
	fl.Float64("if-above", 0, "compact only when the view fills at least this percentage of the input budget")
	fl.String("model", "", "model for the budget and tokenizer (default: the session's)")
	fl.Int("window", 0, "context window in tokens (overrides the model's)")
	fl.String("lang", "", "language of the messages: en or zh (default from LC_ALL/LANG)")
	fl.String("base-url", "", "Chat Completions endpoint for --summarizer openai")
	fl.String("summary-model", "", "model that writes the summary for --summarizer openai")
	_ = cmd.RegisterFlagCompletionFunc("summarizer", fixedCompletion("extractive", "openai", "exec"))
	_ = cmd.RegisterFlagCompletionFunc("lang", fixedCompletion("en", "zh"))
	return cmd
}

func (o *compactOptions) summarizer() (compact.Summarizer, error) {
	if o.Summarizer != nil {
		return o.Summarizer, nil
	}
	switch o.SummarizerName {
	case "openai":
		model := o.SummaryModel
		if model == "" {
			model = o.Compact.Estimate.Model
		}
		if model == "" {
			return nil, &UsageError{Err: errors.New("--summarizer openai needs --summary-model")}
		}
		if o.APIKey == "" && o.BaseURL == "" {
			return nil, &UsageError{Err: errors.New("--summarizer openai needs CTXFOLD_API_KEY or OPENAI_API_KEY (or a --base-url that needs no key)")}
		}
		return &compact.OpenAI{BaseURL: o.BaseURL, APIKey: o.APIKey, Model: model}, nil
	case "exec":
		return &compact.Exec{Command: o.SummarizerCmd}, nil
	}
	return compact.Extractive{}, nil
}

func runCompact(ctx context.Context, opts *compactOptions) error {
	s, err := opts.summarizer()
	if err != nil {
		return err
	}
	co := opts.Compact
	co.Summarizer = s
	if !opts.JSON && opts.IO.ProgressEnabled() {
		co.OnStart = func() { fmt.Fprintln(opts.IO.ErrOut, report.CompactionStarted(opts.Lang)) }
	}
	res, err := compact.Compact(ctx, co)
	if res != nil {
		printWarnings(opts.IO.ErrOut, res.Warnings)
	}
	var failed *compact.FailedError
	var changed *compact.ChangedError
	switch {
	case errors.As(err, &failed):
		msg := report.CompactionFailed(opts.Lang, failed.Err.Error())
		if opts.JSON {
			if jerr := writeCompactJSON(opts.IO.Out, res, co, msg); jerr != nil {
				return jerr
			}
		} else {
			fmt.Fprintf(opts.IO.ErrOut, "ctxfold: %s\n", msg)
		}
		return &SilentError{Code: failed.ExitCode()}
	case errors.As(err, &changed):
		msg := report.CompactionChanged(opts.Lang, changed.Msg)
		if opts.JSON {
			if jerr := writeCompactJSON(opts.IO.Out, res, co, msg); jerr != nil {
				return jerr
			}
		} else {
			fmt.Fprintf(opts.IO.ErrOut, "ctxfold: %s\nctxfold: hint: %s\n", msg, changed.Hint())
		}
		return &SilentError{Code: changed.ExitCode()}
	case err != nil:
		return err
	}
	msg := compactMessage(opts.Lang, res)
	if opts.JSON {
		return writeCompactJSON(opts.IO.Out, res, co, msg)
	}
	if res.Outcome == compact.OutcomePlanned || (co.DryRun && res.Outcome == compact.OutcomeNoOp) {
		return writePlan(opts.IO.Out, res, msg)
	}
	fmt.Fprintln(opts.IO.Out, msg)
	if res.Outcome == compact.OutcomeSucceeded {
		fmt.Fprintf(opts.IO.Out, "summary: %s\n", res.SummaryID)
	} else if res.Reason != "" {
		fmt.Fprintf(opts.IO.ErrOut, "ctxfold: note: %s\n", res.Reason)
	}
	return nil
}

func compactMessage(lang report.Lang, res *compact.Result) string {
	switch res.Outcome {
	case compact.OutcomeSucceeded:
		return report.CompactionFinished(lang, res.SummarisedCount, res.TokensBefore, res.TokensAfter)
	case compact.OutcomeNoOp:
		return report.CompactionNoOp(lang)
	case compact.OutcomePlanned:
		return fmt.Sprintf("would cover %d older messages", res.SummarisedCount)
	}
	return ""
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
		fmt.Fprintf(w, "covered: %s\n", strings.Join(p.CoversIDs, " "))
		fmt.Fprintf(w, "newly covered turns: %d\n", p.CompactedTurns)
		fmt.Fprintf(w, "replaced tokens: %d\n", p.ReplacedTokens)
		fmt.Fprintf(w, "kept: %s\n", strings.Join(p.KeptIDs, " "))
		fmt.Fprintf(w, "kept tokens: %d\n", p.TailTokens)
	}
	return nil
}

func writeCompactJSON(w io.Writer, res *compact.Result, co compact.Options, msg string) error {
	if res == nil {
		res = &compact.Result{Outcome: compact.OutcomeFailed}
	}
	covers := res.CoversIDs
	if covers == nil {
		covers = []string{}
	}
	obj := map[string]any{
		"outcome": res.Outcome, "summary_id": res.SummaryID, "summarised_count": res.SummarisedCount,
		"covers_ids": covers, "tokens_before": res.TokensBefore, "tokens_after": res.TokensAfter,
		"message": msg, "session": co.Dir, "summarizer": res.Summarizer,
	}
	if res.Reason != "" {
		obj["reason"] = res.Reason
	}
	if co.DryRun && res.Plan != nil {
		kept := res.Plan.KeptIDs
		if kept == nil {
			kept = []string{}
		}
		obj["dry_run"] = true
		obj["kept_ids"] = kept
		obj["target"] = res.Plan.Target
	}
	return report.JSON(w, obj)
}
