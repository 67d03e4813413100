package cmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/transcript"
)

type renderOptions struct {
	IO     *report.IOStreams
	Dir    string
	Head   string
	Raw    bool
	Format render.Format
	JSON   bool
	Open   transcript.OpenOptions
}

func newRenderCmd(f *Factory) *cobra.Command {
	opts := &renderOptions{IO: f.IO}
	var format string
	cmd := &cobra.Command{
		Use:   "render DIR",
		Short: "Print what the model reads next turn",
		Long: `Print the rendered view from HEAD (or --head): the predecessor spine with the
active summary substituted for the segment it covers (seed §3), or the raw
spine when the branch does not hold the whole covered segment. --raw ignores
summaries: the pre-compaction view.

Formats: text (for people), ids (one id a line, root first), jsonl (the stored
nodes), openai (a Chat Completions messages array), anthropic (a Messages API
body {system, messages}). Output is deterministic. With --json, a description
of the view (ids, whether a summary substitutes) is printed instead.` + exitStatusHelp(""),
		Example: `  ctxfold render ./s
  ctxfold render ./s --format ids
  ctxfold render ./s --raw --format ids      # the pre-compaction view
  ctxfold render ./s --head n12 --format openai > body.json`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			fl := cmd.Flags()
			opts.Head, _ = fl.GetString("head")
			opts.Raw, _ = fl.GetBool("raw")
			fmtv, err := render.ParseFormat(format)
			if err != nil {
				return &UsageError{Err: err}
			}
			opts.Format = fmtv
			opts.JSON = f.Config.GetBool("json")
			opts.Open = f.openOptions()
			return runRender(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.String("head", "", "render from this node instead of HEAD")
	fl.Bool("raw", false, "ignore summaries (the pre-compaction view)")
	fl.StringVar(&format, "format", "text", "text, ids, jsonl, openai or anthropic")
	_ = cmd.RegisterFlagCompletionFunc("format", fixedCompletion("text", "ids", "jsonl", "openai", "anthropic"))
	_ = cmd.RegisterFlagCompletionFunc("head", nodeIDFlagCompletion(f))
	return cmd
}

func runRender(_ context.Context, opts *renderOptions) error {
	g, err := dag.Open(opts.Dir, opts.Open)
	if err != nil {
		return err
	}
	defer g.S.Close()
	printWarnings(opts.IO.ErrOut, g.S.Warnings)
	view, err := render.Build(g, opts.Head, opts.Raw)
	if err != nil {
		return err
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
		return report.JSON(opts.IO.Out, map[string]any{
			"session": opts.Dir, "head": head, "raw": opts.Raw, "summarized": view.Summarized(),
			"summary_id": summary, "ids": view.IDs(),
		})
	}
	return render.Write(opts.IO.Out, view, opts.Format)
}
