package cmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/compact"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/export"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/store"
)

type uncompactOptions struct {
	IO   *report.IOStreams
	JSON bool
	Undo compact.UndoOptions
	// ExportTo is --export: a transcript FILE is handed back as a new
	// session of that client (uncompact_file.go); File is then set.
	ExportTo string
	File     uncompactFileOptions
	// ModelFlags budget the history handed back (--export).
	ModelFlags modelFlags
	// Summarizers and the compact targets in File.Compact serve
	// --recompact.
	Summarizers summarizerSettings
}

// uncompactJSON is the --json object.
type uncompactJSON struct {
	Session string `json:"session"`
	compact.UndoResult
}

func newUncompactCmd(f *Factory, runF func(*uncompactOptions) error) *cobra.Command {
	opts := &uncompactOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "uncompact DIR",
		Short: "Take a compaction back: its summary stops standing in for its turns",
		Long: `Take back the active summary of a session (or, with --summary, that one and every
compaction since): render, estimate, graph, audit and verify then show the view
before it — the summary it extended active again if there was one, else the raw
branch. It is recorded append-only as a summary_undone event in events.jsonl
(docs/FORMAT.md §10): nodes.jsonl is not touched and the summary stays as a
relic, so 'ctxfold compact' afterwards works as on any session, and --redo (or
another compact) puts a summary back. Nothing to undo is a no-op (exit 0).

With a client's transcript FILE and --export claude-code|codex|gemini, the
client's own latest compaction is taken back and the whole history written as
a NEW session of that client where it looks for it (Gemini CLI: beside FILE;
the original is never touched), with the command that resumes it; --json gives
session_id and output. A history that no longer fits the model's input budget
is refused with the figures (exit 5, nothing written). --recompact compacts
the covered turns again with ctxfold's compact (--keep-tokens,
--max-summary-tokens, --min-survival, --summarizer as for 'ctxfold compact')
before the export: ctxfold's fact-keeping summary stands in place of the
client's, and the report counts the facts 'ctxfold audit' found the client's
summary dropped that it keeps. Without --export a FILE is refused: ctxfold
never writes a transcript's cache session.` +
			exitStatusHelp("  2  --summary names no summary, or one that stands in for nothing now (nothing written)\n  3  with --recompact: the compaction failed or was rejected (nothing written)\n  5  with --export: the history without its compaction (or recompacted) does not fit the window\n  6  a transcript file without --export, or a cache session (import it first)\n"),
		Example: `  ctxfold uncompact ./s                 # the active summary's turns render again
  ctxfold uncompact ./s --redo          # put it back
  ctxfold uncompact ./s --summary summary_0f62… --json
  ctxfold uncompact ~/.claude/projects/-home-me-app/3f2a….jsonl --export claude-code
  ctxfold uncompact ~/.codex/sessions/…/rollout-….jsonl --export codex --recompact --keep-tokens 20000`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Undo.Dir, opts.JSON = args[0], f.IO.JSON
			if live.IsTranscriptFile(args[0]) {
				opts.ModelFlags.recordExplicit(cmd)
				if err := opts.checkRecompact(cmd, f); err != nil {
					return err
				}
				if err := f.resolveUncompactFile(args[0], opts); err != nil {
					return err
				}
				if runF != nil {
					return runF(opts)
				}
				return runUncompactFile(cmd.Context(), opts.IO, opts.JSON, opts.File)
			}
			if opts.File.Recompact {
				return &UsageError{Err: errors.New("--recompact goes with a transcript FILE and --export: on a session directory, run 'ctxfold compact DIR'")}
			}
			if opts.ExportTo != "" {
				return &UsageError{Err: errors.New("--export hands a client's transcript FILE back: for a session directory, use 'ctxfold export DIR --to CLIENT'")}
			}
			opts.Undo.Store, opts.Undo.Now = f.writeOptions("uncompact"), f.Now
			if opts.Undo.Redo && opts.Undo.Summary != "" {
				return &UsageError{Err: errors.New("--redo puts back the last undo: not with --summary")}
			}
			if runF != nil {
				return runF(opts)
			}
			return runUncompact(cmd.Context(), opts)
		},
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			return nil, cobra.ShellCompDirectiveFilterDirs
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Undo.Summary, "summary", "", "the summary to take back: the active one (default) or one it extends")
	fl.BoolVar(&opts.Undo.Redo, "redo", false, "put back the summary the last uncompact took back")
	fl.StringVar(&opts.ExportTo, "export", "", "with a transcript FILE: write it back, its latest compaction undone, as a new session of this client (claude-code, codex or gemini)")
	_ = cmd.RegisterFlagCompletionFunc("export", fixedCompletion("claude-code", "codex", "gemini"))
	fl.BoolVar(&opts.File.Recompact, "recompact", false, "with --export: compact the covered turns again with ctxfold's summary in place of the client's")
	fl.IntVar(&opts.File.Compact.KeepTokens, "keep-tokens", 0, "with --recompact: retained-token target for the kept tail (as for compact)")
	fl.IntVar(&opts.File.Compact.MaxSummaryTokens, "max-summary-tokens", 0, "with --recompact: ceiling on the summary's size (as for compact)")
	fl.Float64Var(&opts.File.Compact.MinSurvival, "min-survival", 0, "with --recompact: reject a summary keeping less than this percentage of any kind of fact")
	addSummarizerFlags(cmd, &opts.Summarizers)
	addModelFlags(cmd, &opts.ModelFlags)
	return cmd
}

func runUncompact(ctx context.Context, opts *uncompactOptions) error {
	if opts.Undo.Now == nil {
		opts.Undo.Now = time.Now
	}
	res, err := compact.Undo(ctx, opts.Undo)
	printWarnings(opts.IO.ErrOut, res.Warnings)
	if err != nil {
		return err
	}
	if opts.JSON {
		return report.JSON(opts.IO.Out, uncompactJSON{Session: opts.Undo.Dir, UndoResult: res})
	}
	switch {
	case res.NoOp && res.Redo:
		fmt.Fprintln(opts.IO.Out, "nothing to redo: the last uncompact was not of the summary active now")
	case res.NoOp:
		fmt.Fprintln(opts.IO.Out, "nothing to undo: no summary stands in for any turn")
	case res.Redo:
		fmt.Fprintf(opts.IO.Out, "redone: %s stands in for its %d turns again\n", render.TextSafe(res.Undone), res.Covered)
	case res.Active != "":
		fmt.Fprintf(opts.IO.Out, "undone: %s no longer stands in for its %d turns; %s is active again\n",
			render.TextSafe(res.Undone), res.Covered, render.TextSafe(res.Active))
	default:
		fmt.Fprintf(opts.IO.Out, "undone: %s no longer stands in for its %d turns; the branch renders raw\n", render.TextSafe(res.Undone), res.Covered)
	}
	return nil
}

// checkRecompact refuses the compact flags without --recompact and builds
// the summarizer with it.
func (opts *uncompactOptions) checkRecompact(cmd *cobra.Command, f *Factory) error {
	c := &opts.File.Compact
	if !opts.File.Recompact {
		for _, name := range []string{"keep-tokens", "max-summary-tokens", "min-survival", "summarizer", "summarizer-cmd", "base-url", "summary-model"} {
			if cmd.Flags().Changed(name) {
				return &UsageError{Err: fmt.Errorf("--%s goes with --recompact", name)}
			}
		}
		return nil
	}
	if cmd.Flags().Changed("keep-tokens") && c.KeepTokens <= 0 || c.KeepTokens < 0 || c.MaxSummaryTokens < 0 {
		return &UsageError{Err: errors.New("--keep-tokens needs a positive target, --max-summary-tokens a non-negative one")}
	}
	if c.MinSurvival < 0 || c.MinSurvival > 100 {
		return &UsageError{Err: fmt.Errorf("--min-survival is a percentage from 0 to 100, got %v", c.MinSurvival)}
	}
	opts.Summarizers.Warn = f.IO.ErrOut
	if err := opts.Summarizers.resolve(cmd, f.Getenv); err != nil {
		return err
	}
	s, err := opts.Summarizers.build(opts.ModelFlags.Model)
	c.Summarizer = s
	return err
}

// resolveUncompactFile fills uncompact FILE's options: without --export a
// file is refused (its cache session is ctxfold's read-only copy, exit 6).
func (f *Factory) resolveUncompactFile(file string, opts *uncompactOptions) error {
	if opts.ExportTo == "" {
		return &store.CacheSessionError{Dir: file, Command: "uncompact", File: file}
	}
	if opts.Undo.Redo || opts.Undo.Summary != "" {
		return &UsageError{Err: errors.New("a transcript FILE has its client's latest compaction taken back: not with --redo or --summary")}
	}
	to, err := export.ParseTarget(opts.ExportTo)
	if err != nil {
		return &UsageError{Err: err}
	}
	est, fallback, err := f.resolveModelOptions(opts.ModelFlags)
	if err != nil {
		return err
	}
	o := &opts.File
	o.File, o.To, o.ClientHome = file, to, clientHome(to, f.Getenv)
	o.Import = importer.Options{From: importer.Auto, Store: f.writeOptions("uncompact"), Input: f.liveInput()}
	o.Estimate = estimate.SessionOptions{Estimate: est, DefaultModel: fallback, Open: f.openOptions()}
	o.Export = export.Options{Now: f.Now}
	o.Open = f.openOptions()
	return nil
}
