package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/report/graph"
	"github.com/ctxfold/ctxfold/transcript"
)

type graphOptions struct {
	IO     *report.IOStreams
	Dir    string
	Format graph.Format
	// Output is the file to write ("" or "-": stdout).
	Output string
	Expand bool
	Around string
	Depth  int
	Open   transcript.OpenOptions
	// Estimate comes from the config (model, encoding, window, models:);
	// an empty model means the session's.
	Estimate estimate.Options
}

// defaultAroundDepth is --depth when --around is given alone.
const defaultAroundDepth = 5

func newGraphCmd(f *Factory) *cobra.Command {
	opts := &graphOptions{IO: f.IO}
	var format string
	cmd := &cobra.Command{
		Use:   "graph DIR",
		Short: "Draw the DAG with its summary capsule (tree, JSON, DOT, Mermaid, HTML)",
		Long: `Draw a session's DAG. The active summary is drawn as one capsule on exactly
the branches whose rendered context carries it (the same rule render uses,
seed §3): its covered nodes are hidden there and drawn raw on the branches
that render raw. Superseded summaries are drawn as relics. Nodes spawned by a
turn (caller) hang under it and fold with it. Token counts come from
estimate, with the session's model (or the config's model:, models:).

Formats:
  tree      like git log --graph, root first: forks hang off to the right,
            HEAD's branch runs straight down; one line per node (role,
            tokens, a preview). Colour on a terminal only. Streams.
  json      one object: {session, head, active_summary_id, model, nodes: [
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
atomically: a failed run leaves no partial file.` + exitStatusHelp(""),
		Example: `  ctxfold graph ./s
  ctxfold graph ./s --expand
  ctxfold graph ./s --around a42 --depth 3
  ctxfold graph ./s --json | jq '.nodes[] | select(.covers_ids)'
  ctxfold graph ./s --format dot | dot -Tsvg > s.svg
  ctxfold graph ./s --format html -o s.html`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			fl := cmd.Flags()
			fmtv, err := graph.ParseFormat(format)
			if err != nil {
				return &UsageError{Err: err}
			}
			if f.Config.GetBool("json") {
				if fl.Changed("format") && fmtv != graph.FormatJSON {
					return &UsageError{Err: fmt.Errorf("--json and --format %s disagree", fmtv)}
				}
				fmtv = graph.FormatJSON
			}
			opts.Format = fmtv
			opts.Output, _ = fl.GetString("output")
			opts.Expand, _ = fl.GetBool("expand")
			opts.Around, _ = fl.GetString("around")
			opts.Depth, _ = fl.GetInt("depth")
			if fl.Changed("depth") && opts.Around == "" {
				return &UsageError{Err: errors.New("--depth needs --around ID")}
			}
			if opts.Depth < 0 {
				return &UsageError{Err: fmt.Errorf("--depth must be at least 0, got %d", opts.Depth)}
			}
			opts.Open = f.openOptions()
			if opts.Estimate, err = f.modelOptions(); err != nil {
				return err
			}
			return runGraph(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&format, "format", "tree", "tree, json, dot, mermaid or html")
	fl.StringP("output", "o", "", "write to FILE (atomically) instead of stdout")
	fl.Bool("expand", false, "draw the covered nodes inside the capsule")
	fl.String("around", "", "draw only the nodes near this id")
	fl.Int("depth", defaultAroundDepth, "with --around: how many steps away to draw")
	_ = cmd.RegisterFlagCompletionFunc("format", fixedCompletion("tree", "json", "dot", "mermaid", "html"))
	_ = cmd.RegisterFlagCompletionFunc("around", nodeIDFlagCompletion(f))
	return cmd
}

// aroundError is a --around id that does not exist: a usage error.
type aroundError struct{ err error }

func (e *aroundError) Error() string { return e.err.Error() }
func (e *aroundError) ExitCode() int { return ExitUsage }

func runGraph(ctx context.Context, opts *graphOptions) error {
	g, err := dag.Open(opts.Dir, opts.Open)
	if err != nil {
		return err
	}
	defer g.S.Close()
	printWarnings(opts.IO.ErrOut, g.S.Warnings)
	if opts.Around != "" {
		if _, ok := g.Lookup(opts.Around); !ok {
			return &aroundError{fmt.Errorf("%s: --around %q: no such node", opts.Dir, opts.Around)}
		}
	}
	est := opts.Estimate
	est.Warn = func(msg string) { fmt.Fprintf(opts.IO.ErrOut, "ctxfold: warning: %s\n", msg) }
	if est.Model == "" {
		est.Model = g.S.Meta.Model
	}
	if _, ok := estimate.LookupModel(est.Model, est.Models); !ok && est.Model != "" {
		// A drawing should not fail on an unknown model: count with the
		// default encoding and say so.
		fmt.Fprintf(opts.IO.ErrOut, "ctxfold: warning: unknown model %q: token counts use the default encoding\n", est.Model)
		est.Model = ""
	}
	if g.Len() == 0 && opts.Format == graph.FormatTree && opts.IO.StderrTTY {
		// An empty result is not a failure; say so on a terminal only.
		fmt.Fprintln(opts.IO.ErrOut, "ctxfold: nothing to show: the session has no nodes")
	}
	gopts := graph.Options{Format: opts.Format, Expand: opts.Expand, Around: opts.Around, Depth: opts.Depth,
		Estimate: est, Session: opts.Dir}
	toStdout := opts.Output == "" || opts.Output == "-"
	if toStdout {
		gopts.Palette = report.NewPalette(opts.IO)
		gopts.Width = opts.IO.TerminalWidth
		return graph.Write(ctx, opts.IO.Out, g, gopts)
	}
	return writeGraphOutput(opts.Output, func(w io.Writer) error {
		return graph.Write(ctx, w, g, gopts)
	})
}

// writeGraphOutput writes path through a temporary file in the same
// directory, renamed into place only when fn succeeded: a failed run
// leaves no partial file (and an existing file untouched).
func writeGraphOutput(path string, fn func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("-o %s: %w", path, errors.Unwrap(err))
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = fn(tmp); err != nil {
		return err
	}
	if err = tmp.Chmod(0o644); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("-o %s: %w", path, errors.Unwrap(err))
	}
	return nil
}
