package cmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/compact"
	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/store"
)

type uncompactOptions struct {
	IO   *report.IOStreams
	JSON bool
	Undo compact.UndoOptions
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

A client's transcript FILE is read through ctxfold's cache, which is never
written: import it first (ctxfold import FILE -o DIR), then uncompact DIR.` +
			exitStatusHelp("  2  --summary names no summary, or one that stands in for nothing now (nothing written)\n  6  a transcript file or a cache session (import it first)\n"),
		Example: `  ctxfold uncompact ./s                 # the active summary's turns render again
  ctxfold uncompact ./s --redo          # put it back
  ctxfold uncompact ./s --summary summary_0f62… --json`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if live.IsTranscriptFile(args[0]) {
				// Its cache session is ctxfold's read-only copy (exit 6).
				return &store.CacheSessionError{Dir: args[0], Command: "uncompact", File: args[0]}
			}
			opts.Undo.Dir, opts.JSON = args[0], f.IO.JSON
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
