package cmd

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/store"
)

type auditOptions struct {
	// File is the transcript file Dir is the cache session of
	// (docs/LIVE.md); "" for a session directory argument.
	File      string
	IO        *report.IOStreams
	Dir       string
	SummaryID string
	All       bool
	JSON      bool
	// FailBelow fails (exit 1) when an audited summary's overall survival
	// is below it; negative: no gate.
	FailBelow float64
	// Missing is how many missing facts of each kind the text output lists
	// (0: all).
	Missing int
	Open    store.OpenOptions
	// Many: the arguments were transcript files, a folder or a pattern
	// (expandArgs), audited file by file in Args (runAuditMany).
	Many bool
	Args []string
}

const auditLong = `Audit a summary: take the facts of the turns it covers and of their caller
subtrees (the sub-agents they ran) — the user's requests and instructions, file
paths, shell commands that ran, error lines of failed tool results, code
identifiers, URLs and numbers with units — and check each against what the
model reads now: the summary and the kept tail after it. A fact absent from
both was lost by the compaction (the turns themselves are still on disk).

By default the active summary is audited; --summary ID audits one summary and
--all every summary, relics and summaries imported from Claude Code or Codex
included. Each summary reports, per kind, the facts found, kept and missing
(with the node ids they came from) and the overall survival; facts of pinned
nodes ('ctxfold pin') are reported again on their own. --fail-below PCT exits 1
when an audited summary keeps less than PCT percent of its facts, for CI.
docs/COMPACT.md §6 defines every kind.

Several transcript files, a folder of them (such as a Claude Code project
folder) or a quoted pattern are audited file by file in parallel: each block
is named by its file, a transcript never compacted says so, --json gives one
object per file ({file, read_error} for one that cannot be read or holds no
summary), and a summary line ends the text output.`

func newAuditCmd(f *Factory, runF func(*auditOptions) error) *cobra.Command {
	opts := &auditOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "audit DIR|FILE|FOLDER...",
		Short: "Show which facts of the folded turns the model no longer reads",
		Long: auditLong + exitStatusHelp(`  audit: 1 a summary's survival is below --fail-below, 2 no summary to audit
  (never compacted, or --summary names no summary)`),
		Example: `  ctxfold audit ./s
  ctxfold audit ./s --all
  ctxfold audit ./s --json | jq '.summaries[0].kinds[] | {kind, survival_pct}'
  ctxfold audit ./s --fail-below 90            # CI gate
  ctxfold audit ~/.claude/projects/-home-me-proj/`,
		Args: minArgs(1),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return nil, cobra.ShellCompDirectiveFilterDirs
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.resolveAudit(cmd, args, opts); err != nil {
				return err
			}
			switch {
			case runF != nil:
				return runF(opts)
			case opts.Many:
				return runAuditMany(cmd.Context(), f, opts)
			}
			return runAudit(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.SummaryID, "summary", "", "audit this summary instead of the active one")
	_ = cmd.RegisterFlagCompletionFunc("summary", nodeIDFlagCompletion(f))
	fl.BoolVar(&opts.All, "all", false, "audit every summary, relics and imported ones included")
	fl.Float64Var(&opts.FailBelow, "fail-below", 0, "exit 1 when a summary keeps less than this percentage of its facts")
	fl.IntVar(&opts.Missing, "missing", 10, "list at most this many missing facts per kind in text output (0: all)")
	addFileArgFlags(cmd, f)
	return cmd
}

// resolveAudit is the file-argument step and the flags' checks.
func (f *Factory) resolveAudit(cmd *cobra.Command, args []string, opts *auditOptions) error {
	sa, err := f.sessionArgs(cmd.Context(), args)
	if err != nil {
		return err
	}
	if len(sa.Dirs) > 1 && !sa.Many {
		return &UsageError{Err: fmt.Errorf("audit takes one session directory, or transcript files and folders of them; got %d sessions", len(sa.Dirs))}
	}
	if opts.Many = sa.Many; opts.Many {
		opts.Args = sa.Dirs
	} else {
		opts.Dir, opts.File = sa.Dirs[0], fileOf(sa.Live[sa.Dirs[0]])
	}
	opts.JSON = f.IO.JSON
	opts.Open = f.openOptions()
	if !cmd.Flags().Changed("fail-below") {
		opts.FailBelow = -1
	} else if opts.FailBelow < 0 || opts.FailBelow > 100 {
		return &UsageError{Err: fmt.Errorf("--fail-below is a percentage from 0 to 100, got %v", opts.FailBelow)}
	}
	if opts.SummaryID != "" && opts.All {
		return &UsageError{Err: fmt.Errorf("--summary and --all exclude each other")}
	}
	if opts.Missing < 0 {
		return &UsageError{Err: fmt.Errorf("--missing must not be negative")}
	}
	return nil
}

// auditJSON is the --json object: one per DIR.
type auditJSON struct {
	// File is the transcript file Session is the cache session of
	// (docs/LIVE.md); absent for a session directory argument.
	File      string          `json:"file,omitempty"`
	Session   string          `json:"session"`
	FailBelow *float64        `json:"fail_below"`
	Passed    bool            `json:"passed"`
	Summaries []*audit.Result `json:"summaries"`
}

func runAudit(ctx context.Context, opts *auditOptions) error {
	results, err := auditDir(ctx, opts.Dir, opts, opts.IO.ErrOut)
	if err != nil {
		return err
	}
	passed := true
	for _, r := range results {
		if opts.FailBelow >= 0 && r.SurvivalPct < opts.FailBelow {
			passed = false
		}
	}
	if opts.JSON {
		out := auditJSON{File: opts.File, Session: opts.Dir, Passed: passed, Summaries: results}
		if opts.FailBelow >= 0 {
			out.FailBelow = &opts.FailBelow
		}
		if err := report.JSON(opts.IO.Out, out); err != nil {
			return err
		}
	} else {
		writeAuditText(opts.IO.Out, results, opts.Missing)
	}
	if !passed {
		if !opts.JSON {
			fmt.Fprintf(opts.IO.ErrOut, "ctxfold: audit: survival below --fail-below %g%%\n", opts.FailBelow)
		}
		return &SilentError{Code: ExitCheckFailed}
	}
	return nil
}

// auditDir audits the summaries of one session directory.
func auditDir(ctx context.Context, dir string, opts *auditOptions, warn io.Writer) ([]*audit.Result, error) {
	g, err := dag.Open(dir, opts.Open)
	if err != nil {
		return nil, err
	}
	defer g.S.Close()
	printWarnings(warn, g.S.Warnings)
	pins, err := g.S.Pins()
	if err != nil {
		return nil, err
	}
	return audit.Run(ctx, g, audit.Options{SummaryID: opts.SummaryID, All: opts.All, Pinned: pins})
}

// writeAuditText prints, per summary, a header, one row per kind and the
// missing facts. Fact text comes from the transcript: render.TextSafe
// keeps its control characters off the terminal.
func writeAuditText(w io.Writer, results []*audit.Result, maxMissing int) {
	for k, r := range results {
		if k > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "summary %s (%s, %s): covers %d nodes", render.TextSafe(r.SummaryID), r.Status, r.Source, r.CoveredNodes)
		if r.SubtreeNodes > 0 {
			fmt.Fprintf(w, " + %d in caller subtrees", r.SubtreeNodes)
		}
		fmt.Fprintln(w)
		if !r.OnHeadBranch {
			fmt.Fprintln(w, "  (its segment is not on HEAD's branch: checked against the summary alone)")
		}
		fmt.Fprintf(w, "survival: %d of %d facts kept (%.1f%%)\n", r.Kept, r.Total, r.SurvivalPct)
		fmt.Fprintf(w, "  %-12s %6s %6s %8s\n", "kind", "total", "kept", "survival")
		rows := append([]audit.KindResult(nil), r.Kinds...)
		if r.Pinned != nil {
			rows = append(rows, *r.Pinned)
		}
		for _, kr := range rows {
			fmt.Fprintf(w, "  %-12s %6d %6d %7.1f%%\n", kr.Kind, kr.Total, kr.Kept, kr.SurvivalPct)
		}
		if r.Injected > 0 {
			// The hook's injection is not the summary's work (issue 44).
			fmt.Fprintf(w, "only ctxfold's injection (%s) carries %d of the missing facts:\n", render.TextSafe(strings.Join(r.InjectedIDs, ",")), r.Injected)
			for _, f := range r.Facts {
				if f.Injected {
					fmt.Fprintf(w, "  %s: %s\n", f.Kind, render.TextSafe(f.Text))
				}
			}
		}
		for _, pn := range r.PinnedNodes {
			state := "kept verbatim"
			if !pn.Kept {
				state = "NOT kept verbatim"
			}
			fmt.Fprintf(w, "pinned %s: %s\n", render.TextSafe(pn.ID), state)
		}
		for _, kr := range rows {
			if len(kr.Missing) == 0 {
				continue
			}
			fmt.Fprintf(w, "missing %s (%d):\n", kr.Kind, len(kr.Missing))
			for n, f := range kr.Missing {
				if maxMissing > 0 && n == maxMissing {
					fmt.Fprintf(w, "  … %d more (--missing 0 lists all, --json gives every fact)\n", len(kr.Missing)-n)
					break
				}
				fmt.Fprintf(w, "  %s\t%s\n", render.TextSafe(f.Text), render.TextSafe(strings.Join(f.NodeIDs, ",")))
			}
		}
	}
}
