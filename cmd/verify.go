package cmd

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/verify"
)

type verifyOptions struct {
	IO     *report.IOStreams
	Dirs   []string
	JSON   bool
	Strict bool
	// Jobs bounds how many sessions are checked at once.
	Jobs int
	Open store.OpenOptions
	// Live maps a cache session in Dirs to the transcript file it came
	// from (docs/LIVE.md).
	Live map[string]*live.Entry
	// Many and OpenArg: as estimate's (a folder, a pattern or several
	// arguments: each transcript file opened in its own parallel run).
	Many    bool
	OpenArg func(ctx context.Context, arg string) (string, *live.Entry, error)
	// Archive, set by --archive, is the archive whose index is checked
	// first (verify_archive.go); its sessions are in Dirs.
	Archive string
}

func newVerifyCmd(f *Factory, runF func(*verifyOptions) error) *cobra.Command {
	opts := &verifyOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "verify DIR...",
		Short: "Check every invariant of sessions, as a CI gate",
		Long: `Check every invariant of each session and report each violation by code, node
id and file:line: structure (ids, predecessors, callers, cycles, HEAD), summary
nodes (docs/FORMAT.md §4 shape, covers_ids a contiguous chain segment of real turns at
its splice point, one active summary, re-compaction extends the previous
segment, no dead forks, no tool call separated from its result), rendering
(docs/FORMAT.md §4 on HEAD and every branch tip), tool-call adjacency in the rendered
views, and compaction events. docs/VERIFY.md explains every code and how to
fix it.

Several sessions are checked in parallel and reported in argument order (a
folder of transcripts or a quoted pattern, as for estimate: file by file, each
named by its file, then a summary line); with --json, one object per session
per line:
{schema_version, session, ok, num_errors, num_warnings, errors, warnings},
each finding {code, node_id, file, line, message}. --strict counts warnings
(an interrupted write, a pending tool call, a stale active summary) as errors.

With --archive (and --archive-dir), the archive 'ctxfold archive' keeps is
checked: first its full-text index against its sessions (it must hold every
archived session's committed nodes, ids, lines and roles, and nothing else;
a damaged index is an error whose fix is 'ctxfold archive --reindex'), then
every archived session, as a DIR would be.` + exitStatusHelp(`  verify exits 1 when any session has an error, and 2 when any session cannot
  be read at all (a line that does not parse, a missing session.json).`),
		Example: `  ctxfold verify ./s
  ctxfold verify --strict sessions/*
  ctxfold verify --json ./a ./b | jq -c '{session, ok, codes: [.errors[].code]}'
  ctxfold verify --archive`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Transcript files are read through their cache sessions
			// (docs/LIVE.md).
			sa, err := f.sessionArgs(cmd.Context(), args)
			if err != nil {
				return err
			}
			opts.Dirs, opts.Live, opts.Many = sa.Dirs, sa.Live, sa.Many
			if opts.Many {
				opts.OpenArg = f.openArg
			}
			opts.JSON = f.IO.JSON
			opts.Open = f.openOptions()
			opts.Jobs = runtime.GOMAXPROCS(0)
			if runF != nil {
				return runF(opts)
			}
			return runVerify(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Strict, "strict", false, "count warnings as errors")
	addFileArgFlags(cmd, f)
	addVerifyArchive(f, cmd, opts) // verify --archive (verify_archive.go)
	return cmd
}

// sessionCheck is one session's outcome.
type sessionCheck struct {
	Dir      string
	Result   *verify.Result
	Findings []verify.Finding
	// ReadErr is set when the session cannot be read at all.
	ReadErr error
	// entry is the cache session's when the argument was a transcript
	// file opened in this run (Many).
	entry *live.Entry
}

func runVerify(ctx context.Context, opts *verifyOptions) error {
	progress := report.NewProgress(opts.IO, "verifying", 0)
	defer progress.Done()
	if opts.Many {
		progress.SetTotal(len(opts.Dirs))
	}
	checks := fanOut(ctx, len(opts.Dirs), opts.Jobs,
		func(i int) *sessionCheck { return checkArg(ctx, opts.Dirs[i], opts, progress) },
		func(err error) *sessionCheck { return &sessionCheck{ReadErr: err} })
	defer checks.wait()
	code := ExitOK
	w := bufio.NewWriter(opts.IO.Out)
	if opts.Archive != "" {
		failed, err := verifyArchiveIndex(ctx, opts, w)
		if err != nil {
			return err
		}
		if failed {
			code = ExitCheckFailed
		}
	}
	var ok, failed, unreadable int
	for i, dir := range opts.Dirs {
		c := checks.get(i)
		c.Dir = dir
		e := opts.Live[dir]
		file := fileOf(e)
		if opts.Many {
			e = c.entry
			if file = fileOf(e); file == "" && live.IsTranscriptFile(dir) {
				file = dir // it failed before it had a cache session
			}
		}
		if c.ReadErr != nil && ctx.Err() != nil {
			w.Flush()
			return ctx.Err()
		}
		err := progress.Interrupt(func() error {
			if opts.JSON {
				return writeVerifyJSON(w, c, file)
			}
			return writeVerifyText(w, report.NewPalette(opts.IO), c, file)
		})
		if err != nil {
			return err
		}
		switch {
		case c.ReadErr != nil:
			unreadable++
			w.Flush()
			_ = progress.Interrupt(func() error { printError(opts.IO.ErrOut, c.ReadErr); return nil })
			code = ExitUsage
		case !c.Result.OK():
			failed++
			if code == ExitOK {
				code = ExitCheckFailed
			}
		default:
			ok++
		}
	}
	progress.Done()
	if opts.Many && !opts.JSON {
		fmt.Fprintf(w, "\n%s: %d ok, %d with errors, %d unreadable\n", plural(len(opts.Dirs), "transcript"), ok, failed, unreadable)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if code != ExitOK {
		return &SilentError{Code: code}
	}
	return nil
}

// checkArg checks one argument; in a many-file run it first brings a
// transcript file's cache session up to date, in this run.
func checkArg(ctx context.Context, arg string, opts *verifyOptions, progress *report.Progress) *sessionCheck {
	if !opts.Many {
		return checkSession(ctx, arg, opts)
	}
	defer progress.Add(1)
	dir, e, err := opts.OpenArg(ctx, arg)
	if err != nil {
		return &sessionCheck{ReadErr: err}
	}
	c := checkSession(ctx, dir, opts)
	c.entry = e
	return c
}

func checkSession(ctx context.Context, dir string, opts *verifyOptions) *sessionCheck {
	c := &sessionCheck{Dir: dir}
	res, err := verify.Dir(ctx, dir, opts.Open, verify.Options{Strict: opts.Strict}, func(f verify.Finding) {
		c.Findings = append(c.Findings, f)
	})
	if err != nil {
		c.ReadErr = err
		return c
	}
	c.Result = res
	return c
}

type findingJSON struct {
	Code     string `json:"code"`
	Category string `json:"category"`
	NodeID   string `json:"node_id"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Message  string `json:"message"`
}

func writeVerifyJSON(w io.Writer, c *sessionCheck, file string) error {
	errs, warns := []findingJSON{}, []findingJSON{}
	for _, f := range c.Findings {
		j := findingJSON{Code: f.Code, Category: string(f.Category), NodeID: f.NodeID, File: f.File, Line: f.Line, Message: f.Msg}
		if f.Severity == verify.Error {
			errs = append(errs, j)
		} else {
			warns = append(warns, j)
		}
	}
	obj := verifyResult{
		File: file, Session: c.Dir, OK: c.ReadErr == nil && c.Result.OK(),
		NumErrors: len(errs), NumWarnings: len(warns), Errors: errs, Warnings: warns,
	}
	if c.ReadErr != nil {
		obj.ReadError = c.ReadErr.Error()
	} else {
		obj.Nodes, obj.Summaries, obj.Tips = &c.Result.Nodes, &c.Result.Summaries, &c.Result.Tips
	}
	return report.JSON(w, obj)
}

// verifyResult is verify's --json object per session; the counts are
// absent when the session could not be read (read_error says why).
type verifyResult struct {
	// File is the transcript file Session is the cache session of
	// (docs/LIVE.md); absent for a session directory argument.
	File        string        `json:"file,omitempty"`
	Session     string        `json:"session"`
	OK          bool          `json:"ok"`
	NumErrors   int           `json:"num_errors"`
	NumWarnings int           `json:"num_warnings"`
	Errors      []findingJSON `json:"errors"`
	Warnings    []findingJSON `json:"warnings"`
	ReadError   string        `json:"read_error,omitempty"`
	Nodes       *int          `json:"nodes,omitempty"`
	Summaries   *int          `json:"summaries,omitempty"`
	Tips        *int          `json:"tips,omitempty"`
}

// writeVerifyText prints one session's report: a status line, then its
// findings grouped by category.
//
// A transcript file's block is named by the file, not by its cache
// session.
func writeVerifyText(w io.Writer, p report.Palette, c *sessionCheck, file string) error {
	name := c.Dir
	if file != "" {
		name = render.TextSafe(file)
	}
	if c.ReadErr != nil {
		_, err := fmt.Fprintf(w, "%s: %s\n", name, p.Red("cannot be read"))
		return err
	}
	r := c.Result
	shape := fmt.Sprintf("%d nodes, %s, %s", r.Nodes, plural(r.Tips, "branch tip"), plural(r.Summaries, "summary"))
	status := p.Green("ok")
	if !r.OK() {
		status = p.Red(plural(r.Errors, "error"))
	}
	if r.Warnings > 0 {
		status += ", " + p.Yellow(plural(r.Warnings, "warning"))
	}
	fmt.Fprintf(w, "%s: %s (%s)\n", name, status, shape)
	for _, cat := range verify.Categories {
		header := false
		for _, f := range c.Findings {
			if f.Category != cat {
				continue
			}
			if !header {
				fmt.Fprintf(w, "  %s\n", p.Bold(string(cat)))
				header = true
			}
			sev := p.Red("error")
			if f.Severity == verify.Warning {
				sev = p.Yellow("warning")
			}
			if _, err := fmt.Fprintf(w, "    %s %s: %s\n", sev, f.Code, f); err != nil {
				return err
			}
		}
	}
	return nil
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if word == "summary" {
		return fmt.Sprintf("%d summaries", n)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
