package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/report/graph"
	"github.com/ctxfold/ctxfold/store"
)

type graphOptions struct {
	// File is the transcript file Dir is the cache session of
	// (docs/LIVE.md); "" for a session directory argument.
	File   string
	IO     *report.IOStreams
	Dir    string
	Format graph.Format
	// Output is the file to write ("" or "-": stdout).
	Output string
	Expand bool
	Around string
	Depth  int
	Open   store.OpenOptions
	// Estimate comes from the model flags and the config's models:; its
	// Model is the explicit --model only. DefaultModel is the env/config
	// model, used when neither --model nor the session names one.
	Estimate     estimate.Options
	DefaultModel string
	// FormatName and ModelFlags are the flags Format and Estimate are
	// resolved from.
	FormatName string
	ModelFlags modelFlags
}

// defaultAroundDepth is --depth when --around is given alone.
const defaultAroundDepth = 5

const graphLong = `Draw a session's DAG. The active summary is drawn as one capsule on exactly
the branches whose rendered context carries it (the same rule render uses,
docs/FORMAT.md §4): its covered nodes are hidden there and drawn raw on the branches
that render raw. Superseded summaries are drawn as relics. Nodes spawned by a
turn (caller) hang under it and fold with it. Token counts come from
estimate, for the model named by --model, else the model the session
records, else CTXFOLD_MODEL or the config file's model: (an entry of the
config's models: table counts as a known model). --encoding and --window
override the model's; an unknown model that only the session or the config
names is counted with the default encoding, with a warning.

Formats:
  tree      like git log --graph, root first: forks hang off to the right,
            HEAD's branch runs straight down; one line per node (role,
            tokens, a preview). Colour on a terminal only. Streams.
  json      one object: {session, head, active_summary_id, model, encoding
            (what counted the tokens), nodes: [
            {id, predecessor, caller, role, name, tokens, on_head_spine,
            in_head_view, carries_summary, folded, covers_ids (active summary),
            superseded_summary (relics), ...}]}. Same as --json.
  dot       Graphviz; the capsule is a double octagon, relics dashed notes.
  mermaid   a Mermaid flowchart; the capsule is a hexagon.
  html      one self-contained page (no network): click the capsule to
            expand it, click a node for its content, search box, HEAD
            highlighted, estimate's occupancy at the top.

--expand draws the covered nodes inside the capsule. --around ID --depth N
draws only the nodes within N steps of ID. -o FILE writes the file
atomically: a failed run leaves no partial file.`

func newGraphCmd(f *Factory, runF func(*graphOptions) error) *cobra.Command {
	opts := &graphOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "graph DIR",
		Short: "Draw the DAG with its summary capsule (tree, JSON, DOT, Mermaid, HTML)",
		Long:  graphLong + exitStatusHelp(""),
		Example: `  ctxfold graph ./s
  ctxfold graph ./s --expand
  ctxfold graph ./s --around a42 --depth 3
  ctxfold graph ./s --json | jq '.nodes[] | select(.covers_ids)'
  ctxfold graph ./s --model gpt-4o --format html -o s.html
  ctxfold graph ./s --format dot | dot -Tsvg > s.svg
  ctxfold graph ./s --format html -o s.html`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.resolveGraph(cmd, args, opts); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runGraph(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.FormatName, "format", "tree", "tree, json, dot, mermaid or html")
	fl.StringVarP(&opts.Output, "output", "o", "", "write to FILE (atomically) instead of stdout")
	fl.BoolVar(&opts.Expand, "expand", false, "draw the covered nodes inside the capsule")
	fl.StringVar(&opts.Around, "around", "", "draw only the nodes near this id")
	fl.IntVar(&opts.Depth, "depth", defaultAroundDepth, "with --around: how many steps away to draw")
	addModelFlags(cmd, &opts.ModelFlags)
	_ = cmd.RegisterFlagCompletionFunc("format", fixedCompletion("tree", "json", "dot", "mermaid", "html"))
	_ = cmd.RegisterFlagCompletionFunc("around", nodeIDFlagCompletion(f))
	addFileArgFlags(cmd, f)
	return cmd
}

// resolveGraph is the file-argument step, then the format (--json is
// --format json) and the model.
func (f *Factory) resolveGraph(cmd *cobra.Command, args []string, opts *graphOptions) error {
	// A transcript file is read through its cache session (docs/LIVE.md).
	var err error
	if opts.Dir, opts.File, err = f.sessionArg(cmd.Context(), args[0]); err != nil {
		return err
	}
	fl := cmd.Flags()
	if opts.Format, err = graph.ParseFormat(opts.FormatName); err != nil {
		return &UsageError{Err: err}
	}
	if f.IO.JSON {
		if fl.Changed("format") && opts.Format != graph.FormatJSON {
			return &UsageError{Err: fmt.Errorf("--json and --format %s disagree", opts.Format)}
		}
		opts.Format = graph.FormatJSON
	}
	if fl.Changed("depth") && opts.Around == "" {
		return &UsageError{Err: errors.New("--depth needs --around ID")}
	}
	// A negative --depth and an unknown --around id are
	// graph.AroundError (exit 2), checked where the drawing is made.
	opts.Open = f.openOptions()
	opts.ModelFlags.recordExplicit(cmd)
	opts.Estimate, opts.DefaultModel, err = f.resolveModelOptions(opts.ModelFlags)
	return err
}

func runGraph(ctx context.Context, opts *graphOptions) error {
	g, err := dag.Open(opts.Dir, opts.Open)
	if err != nil {
		return err
	}
	defer g.S.Close()
	printWarnings(opts.IO.ErrOut, g.S.Warnings)
	est := opts.Estimate
	est.Warn = func(msg string) { warnf(opts.IO.ErrOut, "%s", msg) }
	explicit := est.Model != ""
	est = est.ForSession(g.S.Meta, opts.DefaultModel)
	if r, ok := estimate.ResolveModel(est.Model, est.Models); ok {
		if w := r.Warning(); w != "" {
			warnf(opts.IO.ErrOut, "%s", w)
		}
	} else if est.Model != "" && est.Window <= 0 && est.RecordedWindow <= 0 {
		if explicit {
			// --model was asked for by name: a typo is the user's to fix.
			_, err := estimate.Budget(est)
			return err
		}
		// A drawing should not fail on a model the session or the config
		// names: count with the default encoding and say so.
		warnf(opts.IO.ErrOut, "unknown model %q: token counts use the default encoding", est.Model)
		est.Model = ""
	}
	if g.Len() == 0 && opts.Format == graph.FormatTree && opts.IO.StderrTTY {
		// An empty result is not a failure; say so on a terminal only.
		fmt.Fprintln(opts.IO.ErrOut, "ctxfold: nothing to show: the session has no nodes")
	}
	pins, err := g.S.Pins()
	if err != nil {
		return err
	}
	gopts := graph.Options{Format: opts.Format, Expand: opts.Expand, Around: opts.Around, Depth: opts.Depth,
		Estimate: est, Session: opts.Dir, File: opts.File, Pinned: pins}
	if opts.Output == "" || opts.Output == "-" {
		gopts.Palette = report.NewPalette(opts.IO)
		gopts.Width = opts.IO.TerminalWidth
		return graph.Write(ctx, opts.IO.Out, g, gopts)
	}
	// -o: a failed run leaves no partial file.
	return report.WriteFileAtomic(opts.Output, func(w io.Writer) error {
		return graph.Write(ctx, w, g, gopts)
	})
}
