package cmd

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/report/timeline"
)

type reportOptions struct {
	// File is the transcript file Dir is the cache session of
	// (docs/LIVE.md); "" for a session directory argument.
	File string
	IO   *report.IOStreams
	Dir  string
	// Output is the page to write; "" with JSON prints the data instead.
	Output string
	JSON   bool
	// Timeline carries --head, the model and the open options.
	Timeline   timeline.Options
	ModelFlags modelFlags
}

const reportLong = `Draw one self-contained HTML page of a session: its occupancy request by
request, its compactions and what fills the window now. The page has inline
CSS and SVG, fetches nothing, opens from disk in any browser and prints.

  Timeline   one mark per recorded request: the input the client recorded
             and ctxfold's calibrated estimate at the same cut (the figure
             'estimate --head <the request's predecessor>' gives, calibrated
             on the requests before it: docs/ACCURACY.md); the window, the
             input budget and the compaction threshold as lines; every
             compaction, the client's own and ctxfold's, with its tokens
             before → after. Hover a mark for its time, model and figures;
             sub-agents' requests are violet squares. Past 3000 requests
             every k-th is drawn, and the page says so.
  Fills      estimate's categories as a stacked bar and the largest nodes of
             the view grouped by the tool that produced them.
  Audit      each compaction's survival by kind and the facts it dropped,
             most valuable first ('audit --all').

The data is embedded as <script type="application/json" id="ctxfold-data">
({session, head, model, window, input_budget, compact_at, total, calibrated,
categories, requests: [{index, node, recorded, estimated, raw, calibrated,
subagent, time, model}], compactions: [{summary, source, status,
after_request, before, after, facts, kept, survival_pct, kinds, dropped}],
largest}); --json prints exactly that object. -o writes the page atomically;
it replaces an existing file only when that is an HTML page, never a symlink.
Without -o the page goes to stdout.`

func newReportCmd(f *Factory, runF func(*reportOptions) error) *cobra.Command {
	opts := &reportOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "report FILE|DIR",
		Short: "One HTML page of a session: occupancy over time, compactions, what fills the window",
		Long:  reportLong + exitStatusHelp(""),
		Example: `  ctxfold report ~/.claude/projects/-home-me-app/3f2a….jsonl -o session.html
  ctxfold report ./s -o s.html --head a42
  ctxfold report ./s --json | jq '.requests[] | [.recorded, .estimated]'`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.resolveReport(cmd, args, opts); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runReport(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Output, "output", "o", "", "write the page to FILE (atomically) instead of stdout")
	fl.StringVar(&opts.Timeline.Head, "head", "", "draw the session up to this node instead of HEAD")
	addModelFlags(cmd, &opts.ModelFlags)
	_ = cmd.RegisterFlagCompletionFunc("head", nodeIDFlagCompletion(f))
	return cmd
}

// resolveReport is the file-argument step, then --json against -o and
// the model.
func (f *Factory) resolveReport(cmd *cobra.Command, args []string, opts *reportOptions) error {
	var err error
	opts.JSON = f.IO.JSON
	if opts.JSON && opts.Output != "" && opts.Output != "-" {
		return &UsageError{Err: errors.New("--json prints the data; -o writes the page: choose one")}
	}
	if opts.Dir, opts.File, err = f.sessionArg(cmd.Context(), args[0]); err != nil {
		return err
	}
	opts.Timeline.File = opts.File
	opts.Timeline.Open = f.openOptions()
	opts.ModelFlags.recordExplicit(cmd)
	opts.Timeline.Estimate, opts.Timeline.DefaultModel, err = f.resolveModelOptions(opts.ModelFlags)
	return err
}

func runReport(ctx context.Context, opts *reportOptions) error {
	d, err := timeline.Build(ctx, opts.Dir, opts.Timeline)
	if err != nil {
		return err
	}
	for _, w := range d.Warnings {
		warnf(opts.IO.ErrOut, "%s", w)
	}
	switch {
	case opts.JSON:
		return timeline.WriteJSON(opts.IO.Out, d)
	case opts.Output == "" || opts.Output == "-":
		return timeline.WriteHTML(opts.IO.Out, d)
	}
	return timeline.WriteFile(opts.Output, d)
}
