package cmd

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/archive"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/verify"
)

// addVerifyArchive gives verify its --archive mode: the archive's
// full-text index checked against its sessions (archive.CheckIndex), then
// every archived session verified as a DIR argument would be. It wraps
// the command so verify.go only calls this and reads opts.Archive.
func addVerifyArchive(f *Factory, cmd *cobra.Command, opts *verifyOptions) {
	var on bool
	var dir string
	fl := cmd.Flags()
	fl.BoolVar(&on, "archive", false, "check the archive (ctxfold archive): its index against its sessions, then every archived session")
	fl.StringVar(&dir, "archive-dir", "", "with --archive: the archive directory (default $XDG_DATA_HOME/ctxfold/archive)")
	_ = cmd.MarkFlagDirname("archive-dir")
	args, runE := cmd.Args, cmd.RunE
	cmd.Args = func(c *cobra.Command, a []string) error {
		if on {
			return nil
		}
		return args(c, a)
	}
	cmd.RunE = func(c *cobra.Command, a []string) error {
		if !on {
			if c.Flags().Changed("archive-dir") {
				return &UsageError{Err: fmt.Errorf("--archive-dir needs --archive")}
			}
			return runE(c, a)
		}
		root, err := f.archiveDir(dir)
		if err != nil {
			return err
		}
		dirs, err := archive.Sessions(root)
		if err != nil {
			return &UsageError{Err: err}
		}
		opts.Archive = root
		return runE(c, append(a, dirs...))
	}
}

// verifyArchiveIndex checks the archive's index and reports it as verify
// reports a session (one --json object, or a block of text); it says
// whether the index has errors.
func verifyArchiveIndex(ctx context.Context, opts *verifyOptions, w io.Writer) (failed bool, err error) {
	res, err := archive.CheckIndex(ctx, opts.Archive)
	if err != nil {
		return false, err
	}
	if opts.JSON {
		return !res.OK(), writeIndexJSON(w, res)
	}
	return !res.OK(), writeIndexText(w, report.NewPalette(opts.IO), res)
}

// archiveCategory is the category of the index's findings.
const archiveCategory = "archive"

func writeIndexJSON(w io.Writer, res *archive.CheckResult) error {
	errs, warns := []findingJSON{}, []findingJSON{}
	for _, f := range res.Findings {
		j := findingJSON{Code: f.Code, Category: archiveCategory, NodeID: f.NodeID, File: indexFindingFile(f), Line: f.Line, Message: f.Msg + indexFix(f)}
		if f.Warning {
			warns = append(warns, j)
		} else {
			errs = append(errs, j)
		}
	}
	nodes := res.Nodes
	return report.JSON(w, verifyResult{Session: res.Index, OK: res.OK(), NumErrors: len(errs), NumWarnings: len(warns),
		Errors: errs, Warnings: warns, Nodes: &nodes})
}

// indexFindingFile is where a finding is: the session's nodes file, the
// session, or ("") the index itself.
func indexFindingFile(f archive.Finding) string {
	if f.File != "" {
		return f.File
	}
	return f.Session
}

// indexFix is the documented fix of a finding (docs/VERIFY.md, "Archive
// index").
func indexFix(f archive.Finding) string {
	if f.Code == archive.CodeIndexBehind {
		return " (run ctxfold archive to catch up)"
	}
	return " (rebuild the index: ctxfold archive --reindex)"
}

func writeIndexText(w io.Writer, p report.Palette, res *archive.CheckResult) error {
	status := p.Green("ok")
	var nerr, nwarn int
	for _, f := range res.Findings {
		if f.Warning {
			nwarn++
		} else {
			nerr++
		}
	}
	if nerr > 0 {
		status = p.Red(plural(nerr, "error"))
	}
	if nwarn > 0 {
		status += ", " + p.Yellow(plural(nwarn, "warning"))
	}
	fmt.Fprintf(w, "%s: %s (%s, %d indexed nodes checked)\n", render.TextSafe(res.Index), status, plural(res.Sessions, "session"), res.Nodes)
	if len(res.Findings) > 0 {
		fmt.Fprintf(w, "  %s\n", p.Bold(archiveCategory))
	}
	for _, f := range res.Findings {
		sev := p.Red("error")
		if f.Warning {
			sev = p.Yellow("warning")
		}
		vf := verify.Finding{NodeID: f.NodeID, File: indexFindingFile(f), Line: f.Line, Msg: f.Msg + indexFix(f)}
		if vf.File == "" {
			vf.File = res.Index
		}
		if _, err := fmt.Fprintf(w, "    %s %s: %s\n", sev, f.Code, render.TextSafe(strings.TrimSpace(vf.String()))); err != nil {
			return err
		}
	}
	return nil
}
