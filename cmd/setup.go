package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/setup"
)

type setupOptions struct {
	IO     *report.IOStreams
	Client string
	// UserScope and ProjectScope are --user and --project, which Scope
	// is resolved from.
	UserScope, ProjectScope bool
	Scope                   setup.Scope
	Home                    string
	Project                 string
	// Getenv reads the variables that name a client's folder
	// (CODEX_HOME, …).
	Getenv  func(string) string
	Command string
	// Warning is said on stderr before the change (a command other
	// machines may not resolve).
	Warning   string
	DryRun    bool
	Uninstall bool
	JSON      bool
	// Archive installs the hook as 'ctxfold hook --archive'.
	Archive bool

	// StableCopy, when ctxfold runs from npx's temporary cache, is the
	// copy setup installs and names instead (setup_npx.go).
	StableCopy *stableCopy
}

const setupLong = `Merge ctxfold into Claude Code's own settings files (docs/HOOKS.md):

  --user (default)  ~/.claude/settings.json: the status line ('ctxfold
                    statusline') and the hooks ('ctxfold hook' on PreCompact,
                    SessionStart compact, PostCompact, UserPromptSubmit);
                    ~/.claude.json: the MCP server ('ctxfold mcp') under
                    mcpServers
  --project         .claude/settings.json of --dir (the hooks, the status line
                    and enabledMcpjsonServers) and its .mcp.json

Every other key, hook and server stays as it was, in its place, its bytes
kept; a status line or MCP server named ctxfold that is not ctxfold's is kept
and reported. Each file is copied to NAME.ctxfold.bak before it is replaced
(NAME.ctxfold.bak.N when that holds something else: a backup is never
overwritten), atomically; a symbolic link or a read-only file is refused,
never written. A second run changes nothing; two runs at once take turns.
The hook and status line commands carry --by-setup, the marker setup finds
them by: --uninstall removes exactly ctxfold's entries, whatever --command
installed them, and reports what it keeps that looks like ctxfold's. When the
file is otherwise as it was at install time, the backup's bytes come back. A
file that is not valid JSON, or whose hooks or mcpServers is not an object,
is left untouched and named. With --project, --command defaults to ctxfold
when this program is the ctxfold on PATH (the files are committed), else a
note says the path is this machine's. --dry-run prints the change as a
unified diff and writes nothing.

codex (--user only): $CODEX_HOME/hooks.json (else ~/.codex) gets the same
hooks ('ctxfold hook --client Codex' on PreCompact, PostCompact, SessionStart,
UserPromptSubmit), merged as above; config.toml gets a marked block with
[mcp_servers.ctxfold] appended, which --uninstall removes (the original bytes
come back). Codex runs new hooks only after the user trusted them when it
asks at its next interactive start; setup cannot do that for the user.

gemini (--user: ~/.gemini/settings.json; --project: .gemini/settings.json of
--dir): the hooks ('ctxfold hook --client Gemini' on PreCompress and
BeforeAgent, timeout 60000 ms) and the MCP server under mcpServers (trusted:
it only reads), merged as for Claude Code. A settings.json with comments is
not plain JSON and is left untouched.

qwen (--user: ~/.qwen/settings.json, or $QWEN_HOME's; --project:
.qwen/settings.json of --dir): the hooks ('ctxfold hook --client 'Qwen Code''
on PreCompact, PostCompact, UserPromptSubmit) and the MCP server (trusted, its
tools always loaded), merged as for Gemini CLI.

copilot (--user only: $COPILOT_HOME, else ~/.copilot): a hooks file of
ctxfold's own, hooks/ctxfold.json ('ctxfold hook --client Copilot' on
PreCompact and UserPromptSubmit), and the MCP server in mcp-config.json.

droid (--user: ~/.factory; --project: .factory of --dir): the hooks
('ctxfold hook --client Droid' on PreCompact, UserPromptSubmit and
PostToolUse) in hooks.json (settings.json when only it declares hooks) and
the MCP server in mcp.json.

opencode, kilo (--user: ~/.config/opencode or ~/.config/kilo; --project: the
project's .opencode or .kilo and its opencode.json or kilo.json): a plugin
file ctxfold writes whole, plugins/ctxfold.js, that runs 'ctxfold hook' before
the client's compaction (the fact ledger goes into the summariser's prompt)
and on each prompt after it; the MCP server under mcp of the config file,
merged as above. pi (--user: ~/.pi/agent; --project: .pi of --dir): an
extension file, extensions/ctxfold.ts, doing the same before pi's compaction
and registering ctxfold_search_history and ctxfold_read_turns, which run
'ctxfold mcp' once a call (pi has no MCP). A plugin or
extension file of that name that setup did not write is never touched; an
older version of setup's is replaced; --uninstall removes it.

--archive (any client) installs the hook as 'ctxfold hook --archive': before
the client compacts (PreCompact; Gemini CLI: PreCompress) the hook also keeps
the transcript in the archive ('ctxfold archive', docs/ARCHIVE.md), within the
hook's time bound and never failing the client. Running setup again with or
without --archive updates the hook.`

func newSetupCmd(f *Factory, runF func(*setupOptions) error) *cobra.Command {
	opts := &setupOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "setup " + strings.Join(setup.ClientNames(), "|"),
		Short: "Install ctxfold's status line, hooks and MCP server into a client's settings",
		Long: setupLong +
			exitStatusHelp("  setup: 2 a settings file is not valid JSON, a link or unreadable (nothing written)"),
		Example: `  ctxfold setup claude-code --dry-run
  ctxfold setup claude-code
  ctxfold setup claude-code --project --dir ~/src/app
  ctxfold setup claude-code --archive
  ctxfold setup claude-code --uninstall
  ctxfold setup codex
  ctxfold setup gemini --project`,
		Args:      exactArgs(1),
		ValidArgs: setup.ClientNames(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.resolveSetup(args, opts); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runSetup(opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.UserScope, "user", false, "the user's settings (default)")
	fl.BoolVar(&opts.ProjectScope, "project", false, "the project's settings (--dir)")
	fl.StringVar(&opts.Project, "dir", "", "project directory for --project (default the working directory)")
	fl.StringVar(&opts.Command, "command", "", "how the client runs ctxfold (default this executable's absolute path)")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "print the change as a diff, write nothing")
	fl.BoolVar(&opts.Uninstall, "uninstall", false, "remove ctxfold's entries")
	fl.BoolVar(&opts.Archive, "archive", false, "the hook also archives the transcript before a compaction (ctxfold archive)")
	_ = cmd.MarkFlagDirname("dir")
	return cmd
}

// resolveSetup checks the scope and fills in where the client's files
// are and how it runs ctxfold.
func (f *Factory) resolveSetup(args []string, opts *setupOptions) error {
	opts.Client = args[0]
	if opts.UserScope && opts.ProjectScope {
		return &UsageError{Err: errors.New("--user and --project exclude each other")}
	}
	opts.Scope = setup.ScopeUser
	if opts.ProjectScope {
		opts.Scope = setup.ScopeProject
	}
	opts.Home = f.Getenv("HOME")
	opts.Getenv = f.Getenv
	if opts.Scope == setup.ScopeUser && !filepath.IsAbs(opts.Home) {
		return &UsageError{Err: errors.New("HOME is not set to an absolute path")}
	}
	if opts.Project == "" {
		opts.Project, _ = os.Getwd()
	}
	if opts.Command == "" {
		opts.Command = defaultCommand()
		opts.StableCopy = npxStableCopy(opts.Command, opts.Home, runtime.GOOS == "windows")
		if opts.StableCopy != nil {
			opts.Command = opts.StableCopy.Dest
		}
		if opts.Scope == setup.ScopeProject && filepath.IsAbs(opts.Command) {
			// Project files are committed: this machine's path does not
			// resolve on the others. ctxfold on PATH does, when it is this
			// same program.
			if onPath := lookPath(f.Getenv("PATH"), "ctxfold"); onPath != "" && sameFile(onPath, opts.Command) {
				opts.Command = "ctxfold"
			} else {
				opts.Warning = fmt.Sprintf("the project's files will run ctxfold as %s, a path of this machine; "+
					"to commit them, run setup with --command ctxfold (with ctxfold on everyone's PATH)", opts.Command)
			}
		}
	}
	opts.JSON = f.IO.JSON
	return nil
}

// lookPath finds an executable file named name in the PATH list path.
func lookPath(path, name string) string {
	for _, d := range filepath.SplitList(path) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p
		}
	}
	return ""
}

func sameFile(a, b string) bool {
	x, err1 := os.Stat(a)
	y, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(x, y)
}

// executable is os.Executable (tests name another program).
var executable = os.Executable

// defaultCommand is this executable's absolute path when it is a real
// install (not a go run build), else "ctxfold" on PATH.
func defaultCommand() string {
	exe, err := executable()
	if err != nil || strings.Contains(exe, string(filepath.Separator)+"go-build") || strings.ContainsAny(exe, " \t'\"") {
		return "ctxfold"
	}
	return exe
}

type setupJSON struct {
	Client  string           `json:"client"`
	Scope   setup.Scope      `json:"scope"`
	DryRun  bool             `json:"dry_run"`
	Changes []*setupJSONFile `json:"changes"`
}

type setupJSONFile struct {
	*setup.Change
	Diff string `json:"diff,omitempty"`
}

func runSetup(opts *setupOptions) error {
	client, err := setup.Lookup(opts.Client)
	if err != nil {
		return &UsageError{Err: err}
	}
	if err := opts.StableCopy.install(opts.IO.ErrOut, opts.DryRun); err != nil {
		return err
	}
	if opts.Warning != "" {
		fmt.Fprintln(opts.IO.ErrOut, "ctxfold: note: "+opts.Warning)
	}
	changes, err := setup.Run(context.Background(), opts.Client, setup.Options{Scope: opts.Scope, Home: opts.Home,
		Project: opts.Project, Command: opts.Command, Uninstall: opts.Uninstall, Getenv: opts.Getenv, Archive: opts.Archive}, opts.DryRun)
	if err != nil {
		return err
	}
	if opts.JSON {
		out := setupJSON{Client: opts.Client, Scope: opts.Scope, DryRun: opts.DryRun}
		for _, c := range changes {
			j := &setupJSONFile{Change: c}
			if opts.DryRun {
				j.Diff = lineDiff(c.Path, c.Before, c.After)
			}
			out.Changes = append(out.Changes, j)
		}
		return report.JSON(opts.IO.Out, out)
	}
	for _, c := range changes {
		writeSetupChange(opts.IO.Out, c, opts.DryRun)
	}
	if client.Note != "" && !opts.Uninstall && !opts.DryRun {
		fmt.Fprintln(opts.IO.ErrOut, "ctxfold: note: "+client.Note)
	}
	return nil
}

func writeSetupChange(w io.Writer, c *setup.Change, dry bool) {
	verb := c.Action
	if dry && c.Action != "unchanged" {
		verb = "would " + c.Action
	}
	fmt.Fprintf(w, "%s: %s", c.Path, verb)
	if len(c.Did) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(c.Did, "; "))
	}
	if c.Backup != "" && !dry {
		fmt.Fprintf(w, ", backup %s", c.Backup)
	}
	fmt.Fprintln(w)
	if dry && c.Action != "unchanged" {
		fmt.Fprint(w, lineDiff(c.Path, c.Before, c.After))
	}
}

// lineDiff is the unified diff of a change, with three lines of context
// (Myers' algorithm, as gopls computes it: github.com/aymanbagabas/go-udiff).
func lineDiff(path string, a, b []byte) string {
	edits := udiff.Lines(string(a), string(b))
	d, err := udiff.ToUnified(path, path, string(a), edits, udiff.DefaultContextLines)
	if err != nil {
		return fmt.Sprintf("--- %s\n+++ %s\n(no diff: %v)\n", path, path, err)
	}
	return d
}
