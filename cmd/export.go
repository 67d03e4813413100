package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/export"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/store"
)

type exportOptions struct {
	IO   *report.IOStreams
	Dir  string
	To   export.Target
	JSON bool
	// Output is the file to write: "" for where the client looks, "-" for
	// stdout.
	Output string
	Force  bool
	// ClientHome is $CLAUDE_CONFIG_DIR or ~/.claude (Claude Code), or
	// $CODEX_HOME or ~/.codex (Codex).
	ClientHome string
	Export     export.Options
	Open       store.OpenOptions
	// ToName is --to, which To is parsed from.
	ToName string
}

// exportLong is export's help text.
const exportLong = `Write the branch HEAD (or --head) names as the client's own transcript, so
the agent resumes it. When the branch carries the active summary (after
'ctxfold compact'), the output carries it as the client's own compaction
record, with the kept tail after it: the client then sends the summary, the
kept tail and the new turns, and none of the covered turns, which are still
written before the record for the client's transcript view.

Claude Code: a project transcript with a compact_boundary record and an
isCompactSummary line. Codex: a rollout with a compacted record. Gemini CLI
(0.61): a session file whose {"$set": {"messages"}} record is the compressed
history the CLI itself writes: the summary as a <state_snapshot> message, the
model's acknowledgement and the kept tail. Ids of nodes
imported from that client are kept; other ids become stable UUIDs. System
prompts are not written (the client sends its own), nor sub-agent turns; each
kind of content the format cannot express is named in one warning.

By default the file goes where the client looks for it:
  claude-code  $CLAUDE_CONFIG_DIR or ~/.claude, then
               projects/<--cwd with every non-alphanumeric as '-'>/<id>.jsonl
  codex        $CODEX_HOME or ~/.codex, then
               sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl
  gemini       $GEMINI_CLI_HOME/.gemini or ~/.gemini, then tmp/<the project
               folder of --cwd: its name in projects.json, else the SHA-256
               of the path>/chats/session-<time>-<id8>.jsonl
and the command prints the path and the command that resumes it. The session
id is --session-id, else a new UUID, so the original transcript is never
overwritten; an existing file is refused unless --force. -o FILE writes
elsewhere, -o - to stdout. A branch with a tool call that has no result is
refused (exit 2), naming the node.`

func newExportCmd(f *Factory, runF func(*exportOptions) error) *cobra.Command {
	opts := &exportOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "export DIR --to claude-code|codex|gemini",
		Short: "Write a branch as the agent client's own transcript, to resume it",
		Long:  exportLong + exitStatusHelp(""),
		Example: `  ctxfold import ~/.claude/projects/-home-me-app/3f2a….jsonl -o s
  ctxfold compact s --keep-tokens 20000
  ctxfold export s --to claude-code --cwd ~/app
  (cd ~/app && claude --resume <printed id>)
  ctxfold export s --to codex -o - | head
  ctxfold export s --to gemini --cwd ~/app && (cd ~/app && gemini --resume <printed id>)`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := export.ParseTarget(opts.ToName)
			if err != nil {
				return &UsageError{Err: err}
			}
			opts.Dir, opts.To = args[0], t
			opts.JSON = f.IO.JSON
			opts.Open = f.openOptions()
			opts.Export.Now = f.Now
			if opts.Export.CWD == "" {
				if opts.Export.CWD, err = os.Getwd(); err != nil {
					return err
				}
			}
			if opts.Export.CWD, err = filepath.Abs(opts.Export.CWD); err != nil {
				return err
			}
			opts.ClientHome = clientHome(t, f.Getenv)
			if runF != nil {
				return runF(opts)
			}
			return runExport(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.ToName, "to", "", "the client: claude-code, codex or gemini (required)")
	fl.StringVar(&opts.Export.Head, "head", "", "export the branch ending at this node instead of HEAD")
	fl.StringVar(&opts.Export.SessionID, "session-id", "", "the client's session id (default: a new UUID)")
	fl.StringVar(&opts.Export.CWD, "cwd", "", "the directory the client resumes in (default: the current one)")
	fl.StringVarP(&opts.Output, "output", "o", "", "write to FILE, or - for stdout (default: where the client looks)")
	fl.BoolVar(&opts.Force, "force", false, "replace an existing file")
	_ = cmd.MarkFlagRequired("to")
	_ = cmd.RegisterFlagCompletionFunc("to", fixedCompletion("claude-code", "codex", "gemini"))
	_ = cmd.RegisterFlagCompletionFunc("head", func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) == 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return completeNodeIDs(f, args[0], toComplete)
	})
	return cmd
}

// clientHome is the folder the client keeps its sessions under.
func clientHome(t export.Target, getenv func(string) string) string {
	env, dir := "CLAUDE_CONFIG_DIR", ".claude"
	switch t {
	case export.Codex:
		env, dir = "CODEX_HOME", ".codex"
	case export.Gemini:
		// Gemini CLI's home replaces the user's, under which .gemini is.
		if v := getenv("GEMINI_CLI_HOME"); v != "" {
			return filepath.Join(v, ".gemini")
		}
		env, dir = "", ".gemini"
	}
	if v := getenv(env); env != "" && v != "" {
		return v
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, dir)
}

func runExport(ctx context.Context, opts *exportOptions) error {
	// The id names the client's file: check it before anything is made.
	if err := export.CheckSessionID(opts.Export.SessionID); err != nil {
		return err
	}
	g, err := dag.Open(opts.Dir, opts.Open)
	if err != nil {
		return err
	}
	defer g.S.Close()
	printWarnings(opts.IO.ErrOut, g.S.Warnings)
	if opts.Export.SessionID == "" {
		opts.Export.SessionID = export.NewUUID()
	}
	clientPath := clientPathFor(opts.To, opts.ClientHome, opts.Export)
	path := opts.Output
	if path == "" {
		path = clientPath
		var have []string
		switch opts.To {
		case export.Codex:
			have = export.CodexRollouts(opts.ClientHome, opts.Export.SessionID)
		case export.Gemini:
			have = export.GeminiSessions(opts.ClientHome, opts.Export.CWD, opts.Export.SessionID)
		}
		if opts.To != export.ClaudeCode {
			// One file per id: --force replaces the one there is.
			if len(have) == 1 && opts.Force && strings.HasSuffix(have[0], ".jsonl") {
				clientPath, path = have[0], have[0]
			} else if len(have) > 0 {
				return &export.ExistsError{Path: have[0]}
			}
		}
	}
	var res *export.Result
	write := func(w io.Writer) error {
		res, err = export.Export(ctx, g, w, opts.To, opts.Export)
		return err
	}
	if path == "-" {
		err = write(opts.IO.Out)
	} else {
		err = export.WriteFile(path, opts.Force, write)
	}
	if err != nil {
		return err
	}
	res.Path, res.ClientPath, res.Resume = path, clientPath, export.ResumeCommand(opts.To, res.SessionID)
	for _, w := range res.Warnings {
		warnf(opts.IO.ErrOut, "%s", w.String())
	}
	if opts.JSON {
		return report.JSON(opts.IO.Out, res)
	}
	if path == "-" {
		return nil
	}
	fmt.Fprintf(opts.IO.Out, "wrote %s (%d lines)\n", render.TextSafe(path), res.Lines)
	if res.Summary != "" {
		fmt.Fprintf(opts.IO.Out, "summary %s stands in for %d covered nodes; %d kept after it\n", render.TextSafe(res.Summary), res.Covered, res.Kept)
	}
	if path != clientPath {
		fmt.Fprintf(opts.IO.Out, "the client looks for it at %s\n", render.TextSafe(clientPath))
	}
	resume := res.Resume
	if opts.To != export.Codex {
		resume = fmt.Sprintf("(cd %s && %s)", shellQuote(opts.Export.CWD), resume)
	}
	fmt.Fprintf(opts.IO.Out, "resume: %s\n", render.TextSafe(resume))
	return nil
}

// clientPathFor is where the client looks for the session o names.
func clientPathFor(to export.Target, home string, o export.Options) string {
	switch to {
	case export.Codex:
		return export.CodexPath(home, o.SessionID, o.Now())
	case export.Gemini:
		return export.GeminiPath(home, o.CWD, o.SessionID, o.Now())
	}
	return export.ClaudeCodePath(home, o.CWD, o.SessionID)
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
