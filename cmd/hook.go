package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ctxfold/ctxfold/archive"
	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/hook"
	"github.com/ctxfold/ctxfold/osfile"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/setup"
	"github.com/ctxfold/ctxfold/store"
)

type hookOptions struct {
	IO *report.IOStreams
	// In is the hook's JSON (stdin).
	In       io.Reader
	CacheDir string
	Timeout  time.Duration
	Budget   int
	Share    float64
	Model    string
	Client   string
	Store    store.WriteOptions
	Open     store.OpenOptions
	// ResumeGC is live.Options.ResumeGC (resumeGC).
	ResumeGC func() (restore func())
	// Archive, set by --archive, is the archive run a PreCompact also
	// makes of its transcript (hook_archive.go).
	Archive *archive.Options
	// Env is the user's environment: where a client's sessions are found
	// (hook.Options.Env; a Copilot CLI hook's transcript, an OpenCode
	// session named by its id).
	Env input.Env
}

const hookLong = `Run as a client hook (docs/HOOKS.md; 'ctxfold setup CLIENT' installs it, and
--client names the client whose hook input and output it speaks). Reads the
hook's JSON on stdin and:

  PreCompact        (Gemini CLI: PreCompress) brings the transcript's cache session up to date, so every
                    turn the client is about to fold stays recallable
  SessionStart      (source compact), PostCompact: notes the compaction; once
                    the client's compaction record is in the transcript it is
                    audited against the turns it covers
  UserPromptSubmit  (Gemini CLI: BeforeAgent) while a compaction is pending:
                    audits its record and adds,
                    as hookSpecificOutput.additionalContext, the facts its
                    summary dropped — pinned text, the user's requests and
                    instructions verbatim, corrections, errors, commands,
                    paths, URLs, identifiers, numbers — cut to --budget
                    tokens, with one line saying how to recall the rest

With --archive ('ctxfold setup … --archive'), a PreCompact also keeps the
transcript in the archive ('ctxfold archive', docs/ARCHIVE.md), within the
hook's time bound.

With --client OpenCode, Kilo or pi (run by the plugin or extension 'ctxfold
setup opencode|kilo|pi' writes; OpenCode and Kilo name the session by
session_id alone), PreCompact (experimental.session.compacting,
session_before_compact) also prints, as additionalContext, the fact ledger
of the turns about to be folded: their facts between a <ctxfold-keep> line
and a </ctxfold-keep> line, with the instruction to keep every line, for the
client's own summariser (docs/HOOKS.md, "The fact ledger").

Each compaction's facts are injected once (state in the cache folder). The
hook never breaks the client: on any error, bad input or timeout it prints
nothing, exits 0 and appends the error to hook.log in the cache folder.`

func newHookCmd(f *Factory, runF func(*hookOptions) error) *cobra.Command {
	opts := &hookOptions{IO: f.IO}
	var archiveOn bool
	cmd := &cobra.Command{
		Use:   "hook",
		Short: "A client's hook (Claude Code, Codex, Gemini CLI, Qwen Code, Copilot CLI, Droid, …): keep what its compaction drops",
		Long: hookLong +
			exitStatusHelp("  hook itself always exits 0."),
		Example: `  echo '{"hook_event_name":"PreCompact","transcript_path":"s.jsonl"}' | ctxfold hook
  ctxfold hook --budget 2000 < hook.json`,
		// A stray argument must not break the client either: it is
		// logged, and the hook runs.
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.In = f.IO.In
			if opts.CacheDir == "" {
				opts.CacheDir, _ = f.cacheDir()
			}
			if len(args) > 0 {
				appendCacheLog(opts.CacheDir, "hook.log", fmt.Errorf("hook: ignored arguments %q", args))
			}
			opts.Store = f.writeOptions("hook")
			opts.Open = f.openOptions()
			opts.ResumeGC = resumeGC(f.Getenv)
			opts.Env = f.clientEnv()
			if archiveOn {
				if err := f.hookArchive(opts); err != nil {
					appendCacheLog(opts.CacheDir, "hook.log", fmt.Errorf("hook: --archive: %w", err))
				}
			}
			if runF != nil {
				return runF(opts)
			}
			runHook(cmd.Context(), opts)
			return nil
		},
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		dir, _ := f.cacheDir()
		appendCacheLog(dir, "hook.log", fmt.Errorf("hook: %w", err))
		return nil
	})
	fl := cmd.Flags()
	fl.StringVar(&opts.CacheDir, "cache-dir", "", "cache directory (default $XDG_CACHE_HOME/ctxfold, else ~/.cache/ctxfold)")
	fl.DurationVar(&opts.Timeout, "timeout", 50*time.Second, "give up (printing nothing) after this long")
	fl.IntVar(&opts.Budget, "budget", 0, "tokens the injected facts may take (default --budget-share of the window)")
	fl.Float64Var(&opts.Share, "budget-share", 100*hook.DefaultBudgetShare, "percentage of the model's window the injected facts may take when --budget is not given")
	fl.StringVar(&opts.Model, "model", "", "model whose window and tokenizer size the budget (default the hook's, else the session's)")
	fl.StringVar(&opts.Client, "client", "Claude Code", "client name used in the injected line")
	fl.BoolVar(&archiveOn, "archive", false, "on PreCompact, also keep the transcript in the archive (ctxfold archive)")
	addSetupMarkerFlag(fl)
	_ = cmd.MarkFlagDirname("cache-dir")
	return cmd
}

// addSetupMarkerFlag accepts setup.Marker, the argument setup writes into
// the commands it installs so that it finds them again (docs/HOOKS.md):
// hidden, and without effect.
func addSetupMarkerFlag(fl *pflag.FlagSet) {
	fl.Bool(strings.TrimPrefix(setup.Marker, "--"), false, "marks a command 'ctxfold setup' wrote")
	_ = fl.MarkHidden(strings.TrimPrefix(setup.Marker, "--"))
}

// runHook prints the hook's output, or nothing, whatever happens.
func runHook(ctx context.Context, opts *hookOptions) {
	out, err := hookOutput(ctx, opts)
	if err != nil {
		appendCacheLog(opts.CacheDir, "hook.log", fmt.Errorf("hook: %w", err))
		return
	}
	if len(out) > 0 {
		fmt.Fprintln(opts.IO.Out, string(out))
	}
}

// hookOutput runs the hook within its time bound; a run still working at
// the deadline is abandoned (the process exits right after).
func hookOutput(ctx context.Context, opts *hookOptions) (out []byte, err error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 50 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				r = result{err: fmt.Errorf("internal error: %v", p)}
			}
			done <- r
		}()
		r.out, r.err = hookRun(ctx, opts)
	}()
	select {
	case r := <-done:
		return r.out, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("gave up after %s", opts.Timeout)
	}
}

func hookRun(ctx context.Context, opts *hookOptions) ([]byte, error) {
	if opts.In == nil {
		return nil, errors.New("no stdin")
	}
	b, err := readAllCtx(ctx, io.LimitReader(opts.In, hook.MaxInput+1))
	if err != nil {
		return nil, err
	}
	in, err := hook.ParseAs(hook.DialectOf(opts.Client), b)
	if err != nil {
		return nil, err
	}
	// The injection is printed while the hook holds its state's lock,
	// between recording it claimed and delivered (hook.Options.Emit).
	emit := func(out []byte) error {
		_, err := fmt.Fprintln(opts.IO.Out, string(out))
		return err
	}
	res, err := hook.Run(ctx, in, hook.Options{CacheDir: opts.CacheDir, Store: opts.Store, Open: opts.Open, ResumeGC: opts.ResumeGC,
		BudgetTokens: opts.Budget, BudgetShare: opts.Share / 100, Model: opts.Model, Client: opts.Client, Emit: emit, Env: opts.Env})
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", in.Event, in.TranscriptPath, err)
	}
	if opts.Archive != nil && in.Event == hook.EventPreCompact && in.TranscriptPath != "" {
		archiveTranscript(ctx, opts, in.TranscriptPath)
	}
	if inj := res.Injected; inj != nil {
		appendCacheLog(opts.CacheDir, "hook.log", fmt.Errorf("info: %s %s: summary %s: %d of %d facts dropped, %d injected in %d tokens (budget %d)",
			in.Event, res.Transcript, inj.SummaryID, inj.Missing, inj.Facts, inj.Shown, inj.Tokens, inj.Budget))
	}
	if l := res.Ledger; l != nil {
		appendCacheLog(opts.CacheDir, "hook.log", fmt.Errorf("info: %s %s: ledger of %d of %d facts in %d tokens (budget %d) handed to the summariser",
			in.Event, in.TranscriptPath, l.Shown, l.Facts, l.Tokens, l.Budget))
	}
	return res.Output, nil
}

// readAllCtx reads r until EOF or ctx ends (a client that never closes
// stdin is not waited for).
func readAllCtx(ctx context.Context, r io.Reader) ([]byte, error) {
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(r)
		done <- result{b, err}
	}()
	select {
	case res := <-done:
		return res.b, res.err
	case <-ctx.Done():
		return nil, errors.New("no hook JSON on stdin before the deadline")
	}
}

// appendCacheLog appends err to name in the cache directory, keeping the
// log under 1 MiB; failing to log is silent (a hook must not fail).
func appendCacheLog(cacheDir, name string, err error) {
	if cacheDir == "" {
		return
	}
	if os.MkdirAll(cacheDir, 0o700) != nil {
		return
	}
	p := filepath.Join(cacheDir, name)
	if st, e := os.Lstat(p); e == nil && st.Size() > 1<<20 {
		_ = os.Rename(p, p+".1")
	}
	f, e := osfile.OpenNoFollow(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if e != nil {
		return
	}
	defer f.Close()
	// The error may quote a hostile transcript_path: escaped, as the
	// status line's log is, so reading the log cannot drive the terminal.
	msg := render.TextSafe(strings.ReplaceAll(err.Error(), "\n", " "))
	fmt.Fprintf(f, "%s %s\n", time.Now().UTC().Format(time.RFC3339), msg)
}
