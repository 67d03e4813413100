package cmd

import (
	"context"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/archive"
	"github.com/ctxfold/ctxfold/mcpserver"
	"github.com/ctxfold/ctxfold/report"
)

type mcpOptions struct {
	IO     *report.IOStreams
	Server mcpserver.Options
}

func newMCPCmd(f *Factory, runF func(*mcpOptions) error) *cobra.Command {
	opts := &mcpOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "MCP server over stdio: recall of the turns a compaction folded",
		Long: `Serve the Model Context Protocol on stdin/stdout (docs/HOOKS.md; 'ctxfold setup
CLIENT' registers it) with three tools over the conversation
of the session it was started in:

  search_history  every turn, covered ones included; each hit names the
                  summary that covers it
  read_turns      the verbatim text of node ids, or of a range, bounded in size
  context_status  calibrated occupancy of the context and compactions so far

The transcript is --transcript, else CTXFOLD_TRANSCRIPT, else Claude Code's
session (CLAUDE_CODE_SESSION_ID) or the newest transcript of the project
directory (CLAUDE_PROJECT_DIR, else the working directory) under
~/.claude/projects. With CTXFOLD_CLIENT=codex (setup codex sets it) it is the
newest rollout under $CODEX_HOME/sessions (else ~/.codex/sessions) started in
the working directory, else the newest; with CTXFOLD_CLIENT=gemini (setup
gemini) the newest session-*.jsonl of the working directory's project under
~/.gemini/tmp; with CTXFOLD_CLIENT naming another client's import format
(qwen-code, copilot, droid, opencode, kilo: the setup of each sets it) the
session its folders hold ('ctxfold sessions --client' lists them) whose id the
variable CTXFOLD_SESSION_VAR names holds (Copilot CLI's
COPILOT_AGENT_SESSION_ID), else the newest one started in the working
directory, else the newest. --session serves a session directory instead.
It is read
through its cache session (docs/LIVE.md); nothing else is written.` + exitStatusHelp(""),
		Example: `  ctxfold mcp
  ctxfold mcp --transcript ~/.claude/projects/-home-me-app/3f2a….jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o := &opts.Server
			o.Locate.Getenv = f.Getenv
			o.Locate.Home = f.Getenv("HOME")
			o.Locate.Cwd, _ = os.Getwd()
			if o.CacheDir == "" {
				o.CacheDir, _ = f.cacheDir()
			}
			if o.ArchiveDir == "" {
				o.ArchiveDir, _ = archive.DefaultDir(f.Getenv)
			}
			o.Store = f.writeOptions("mcp")
			o.Open = f.openOptions()
			o.Version = strings.Fields(versionLine())[1]
			if runF != nil {
				return runF(opts)
			}
			return runMCP(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Server.Locate.Transcript, "transcript", "", "the transcript file to serve")
	fl.StringVar(&opts.Server.Locate.Session, "session", "", "a session directory to serve instead of a transcript")
	fl.StringVar(&opts.Server.CacheDir, "cache-dir", "", "cache directory (default $XDG_CACHE_HOME/ctxfold, else ~/.cache/ctxfold)")
	fl.StringVar(&opts.Server.ArchiveDir, "archive-dir", "", "archive directory of search_history's scope archive (default $XDG_DATA_HOME/ctxfold/archive)")
	fl.StringVar(&opts.Server.Model, "model", "", "model that sizes context_status (default the session's)")
	_ = cmd.MarkFlagFilename("transcript", "jsonl")
	_ = cmd.MarkFlagDirname("session")
	return cmd
}

func runMCP(ctx context.Context, opts *mcpOptions) error {
	// ctxfold's own line transport: a malformed line is answered with a
	// JSON-RPC error and serving goes on, and the requests read before
	// stdin closed are answered before the server ends (issue 45).
	t := &mcpserver.Transport{In: opts.IO.In, Out: opts.IO.Out}
	err := mcpserver.Serve(ctx, opts.Server, t)
	if err == io.EOF || ctx.Err() != nil {
		return nil // the client closed the pipe: a normal end
	}
	return err
}
