package cmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
)

// tailEstimate is estimate --tail's answer for one transcript file: the
// status line's figures (estimate.Status), read from the file's tail where
// it can answer (docs/LIVE.md, "The tail"), else from the whole file.
type tailEstimate struct {
	SchemaVersion int    `json:"schema_version"`
	File          string `json:"file"`
	// Read is "tail" (TailFrom is the tail's first byte; raw_tokens is 0)
	// or "full".
	Read     string `json:"read"`
	TailFrom int64  `json:"tail_from,omitempty"`
	estimate.Status
	Compactions int `json:"compactions"`
}

// resolveEstimateTail checks the arguments of estimate --tail: transcript
// files, measured without importing them whole.
func (f *Factory) resolveEstimateTail(args []string, opts *estimateOptions) error {
	if opts.Session.Head != "" || opts.Nodes {
		return &UsageError{Err: errors.New("--tail measures HEAD's calibrated occupancy only: not with --head or --nodes")}
	}
	for _, a := range args {
		if !live.IsTranscriptFile(a) {
			return &UsageError{Err: fmt.Errorf("--tail reads a transcript file; %s is not one", a)}
		}
	}
	lo, err := f.liveOptions()
	if err != nil {
		return err
	}
	opts.Dirs, opts.TailLive = args, lo
	opts.LiveGC = func() func() { return liveGC(f.Getenv) }
	return nil
}

// runEstimateTail measures each file from its tail, or whole where the
// tail cannot answer, and prints one status per file in argument order.
func runEstimateTail(ctx context.Context, opts *estimateOptions) error {
	var firstErr error
	var over []string
	for i, file := range opts.Dirs {
		te, err := measureTail(ctx, opts, file)
		if err != nil {
			printError(opts.IO.ErrOut, err)
			if firstErr == nil {
				firstErr = err
			}
			if opts.JSON {
				if err := report.JSON(opts.IO.Out, estimateReadError{File: file, ReadError: err.Error()}); err != nil {
					return err
				}
			}
			continue
		}
		if err := printTailEstimate(opts, te, i); err != nil {
			return err
		}
		if opts.FailAbove >= 0 && te.InputBudget > 0 && te.Pct >= opts.FailAbove {
			over = append(over, fmt.Sprintf("%s: budget %.1f%% (%s) ≥ --fail-above %g%%", file, te.Pct, te.Basis, opts.FailAbove))
		}
	}
	return finishEstimate(opts, &fanSummary{}, firstErr, over)
}

// measureTail is one file's answer: from its tail when that gives the
// whole file's number, else through its cache session as estimate FILE.
func measureTail(ctx context.Context, opts *estimateOptions, file string) (tailEstimate, error) {
	ts, err := measureTranscript(ctx, file, opts.TailLive, opts.Session, 1, opts.LiveGC)
	if err != nil {
		return tailEstimate{}, err
	}
	ts.Close()
	return tailEstimate{SchemaVersion: report.SchemaVersion, File: ts.File, Read: ts.Read, TailFrom: ts.TailFrom,
		Status: ts.Status, Compactions: ts.Compactions}, nil
}

func printTailEstimate(opts *estimateOptions, te tailEstimate, i int) error {
	if opts.JSON {
		return report.JSON(opts.IO.Out, te)
	}
	from := "the whole file"
	if te.Read == readTail {
		from = fmt.Sprintf("its tail (from byte %d)", te.TailFrom)
	}
	budget := "no input budget"
	if te.InputBudget > 0 {
		budget = fmt.Sprintf("%.1f%% of the %d-token input budget (%s), %s", te.Pct, te.InputBudget, te.Basis, te.Model)
	}
	if i > 0 {
		fmt.Fprintln(opts.IO.Out)
	}
	_, err := fmt.Fprintf(opts.IO.Out, "%s\n  %d tokens: %s\n  read from %s; compactions: %d\n",
		render.TextSafe(te.File), te.Tokens, budget, from, te.Compactions)
	return err
}
