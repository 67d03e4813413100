package cmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sort"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
)

// auditRun is one file's outcome in a many-file audit.
type auditRun struct {
	results []*audit.Result
	entry   *live.Entry
	err     error
}

// auditReadError is audit's --json object for a file it could not audit
// (read_error: unreadable, or no summary to audit).
type auditReadError struct {
	File      string `json:"file,omitempty"`
	Session   string `json:"session,omitempty"`
	ReadError string `json:"read_error"`
}

// auditTally counts the outcomes of a many-file audit for its summary line
// and its exit code.
type auditTally struct {
	audited, notCompacted, unreadable, below int
	pcts                                     []float64
	code                                     int
}

// runAuditMany audits transcript files (and session directories found in
// a folder) in parallel, reported in argument order, each block named by
// its file. A file never
// compacted is no failure: it is counted, not audited.
func runAuditMany(ctx context.Context, f *Factory, opts *auditOptions) error {
	args := opts.Args
	progress := report.NewProgress(opts.IO, "auditing", len(args))
	defer progress.Done()
	restore := liveGC(f.Getenv)
	defer restore()
	runs := fanOut(ctx, len(args), fanJobs(runtime.GOMAXPROCS(0)), func(i int) auditRun {
		defer progress.Add(1)
		dir, e, err := f.openArg(ctx, args[i])
		if err != nil {
			return auditRun{err: err}
		}
		res, err := auditDir(ctx, dir, opts, io.Discard)
		return auditRun{results: res, entry: e, err: entryError(err, e)}
	}, func(err error) auditRun { return auditRun{err: err} })
	defer runs.wait()
	w := bufio.NewWriter(opts.IO.Out)
	tally := auditTally{code: ExitOK}
	for i, arg := range args {
		r := runs.get(i)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		err := progress.Interrupt(func() error { return writeAuditRun(w, opts, arg, r) })
		if err != nil {
			return err
		}
		tally.add(r, opts.FailBelow)
	}
	progress.Done()
	if err := w.Flush(); err != nil {
		return err
	}
	// The summary line: on a terminal after the blocks; piped, a note on
	// stderr, so stdout ends with the last file's data (fanSummary.print).
	line := fmt.Sprintf("%s: %d audited, %d never compacted, %d unreadable%s",
		plural(len(args), "transcript"), tally.audited, tally.notCompacted, tally.unreadable, survivalLine(tally.pcts))
	switch {
	case !opts.JSON && opts.IO.StdoutTTY:
		fmt.Fprintln(opts.IO.Out, line)
	case !opts.JSON || opts.IO.StderrTTY:
		fmt.Fprintf(opts.IO.ErrOut, "ctxfold: %s\n", line)
	}
	code := tally.code
	if tally.below > 0 && code == ExitOK {
		code = ExitCheckFailed
	}
	if code != ExitOK {
		return &SilentError{Code: code}
	}
	return nil
}

// writeAuditRun prints one file's block (or its --json object, or its
// error on stderr).
func writeAuditRun(w io.Writer, opts *auditOptions, arg string, r auditRun) error {
	name, file := arg, fileOf(r.entry)
	if file != "" {
		name = file
	}
	var none *audit.NoSummaryError
	switch {
	case r.err != nil && opts.JSON:
		return report.JSON(w, auditReadError{File: file, Session: sessionOf(r.entry, arg), ReadError: r.err.Error()})
	case errors.As(r.err, &none):
		_, err := fmt.Fprintf(w, "%s: never compacted (no summary to audit)\n", render.TextSafe(name))
		return err
	case r.err != nil:
		printError(opts.IO.ErrOut, fmt.Errorf("%s: %w", name, r.err))
		return nil
	}
	passed := true
	for _, s := range r.results {
		passed = passed && (opts.FailBelow < 0 || s.SurvivalPct >= opts.FailBelow)
	}
	if opts.JSON {
		out := auditJSON{File: file, Session: sessionOf(r.entry, arg), Passed: passed, Summaries: r.results}
		if opts.FailBelow >= 0 {
			out.FailBelow = &opts.FailBelow
		}
		return report.JSON(w, out)
	}
	fmt.Fprintf(w, "%s\n", report.NewPalette(opts.IO).Bold(render.TextSafe(name)))
	writeAuditText(w, r.results, opts.Missing)
	_, err := fmt.Fprintln(w)
	return err
}

// add counts one file's outcome.
func (t *auditTally) add(r auditRun, failBelow float64) {
	var none *audit.NoSummaryError
	switch {
	case errors.As(r.err, &none):
		t.notCompacted++
	case r.err != nil:
		t.unreadable++
		t.code = max(t.code, ExitCode(r.err))
	default:
		t.audited++
		for _, s := range r.results {
			t.pcts = append(t.pcts, s.SurvivalPct)
			if failBelow >= 0 && s.SurvivalPct < failBelow {
				t.below++
			}
		}
	}
}

func sessionOf(e *live.Entry, arg string) string {
	if e != nil {
		return e.Session
	}
	if live.IsTranscriptFile(arg) {
		return ""
	}
	return arg
}

// survivalLine is " · survival median X%, min Y% over N summaries", or "".
func survivalLine(pcts []float64) string {
	if len(pcts) == 0 {
		return ""
	}
	s := append([]float64(nil), pcts...)
	sort.Float64s(s)
	return fmt.Sprintf(" · survival median %.1f%%, min %.1f%% over %s", s[len(s)/2], s[0], plural(len(s), "summary"))
}
