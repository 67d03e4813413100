package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/store"
)

type importOptions struct {
	IO     *report.IOStreams
	From   string
	Files  []string
	Out    string
	Append bool
	// Env is where the client's configuration lives (a custom model's
	// context window, transcript.WindowReporter).
	Env input.Env
	// Session picks one session of a file holding several: its number
	// (from 1) or the client's own session id ("": all).
	Session string
	// MaxDecompressed bounds a zstd input's decompressed size.
	MaxDecompressed int64
	JSON            bool
	Store           store.WriteOptions
	// Models is the config's models: table (for the model warning).
	Models map[string]estimate.Model
}

const importLong = `Import exported transcripts as session directories.

Formats (--from, default auto: detected from the content of the first file):
  claude-code  Claude Code session .jsonl, with its agent-*.jsonl and
               <session>/subagents/ files (looked up only beside the input)
  codex        Codex CLI rollout-*.jsonl (or rollout-*.jsonl.zst: any
               zstd-compressed input is decompressed first; a fork given
               with its parent continues the parent's session as a branch;
               a sub-agent's rollout joins it as a chain called by the
               spawning node)
  copilot      GitHub Copilot CLI ~/.copilot/session-state/<id>/events.jsonl
               (or that folder); its compactions become summary nodes and
               its sub-agents chains called by their task call
  gemini       Gemini CLI chat recording (.jsonl, or the legacy .json), with
               its sub-agents' chats/<session id>/*.jsonl (looked up only
               beside the input); a /chat save checkpoint-<tag>.json
  chatgpt      ChatGPT export conversations.json (one session per conversation)
  openai       an OpenAI Chat Completions messages array, or a body with "messages"
  anthropic    an Anthropic Messages API body {system, messages}
  aider        aider's .aider.chat.history.md (one session per "# aider chat
               started at" header; --session N picks one)
  cline        a Cline task: tasks/<id>/api_conversation_history.json, the
               task directory, or tasks/ (one session per task); usage from
               ui_messages.json beside it
  openhands    OpenHands events: an evaluation or resolver output.jsonl (one
               session per row), a file store sessions/<sid>/events/ (or
               sessions/), or a JSON array of events; condensations become
               summary nodes
  qwen-code    Qwen Code chat recording (~/.qwen/projects/<project>/chats/*.jsonl)
  opencode     OpenCode's opencode.db (read-only), its older storage/
               directory, or the data directory holding them (one session
               per OpenCode session; --session ses_… picks one), or an
               "opencode export" JSON; compactions become summary nodes
  kilo         Kilo's kilo.db (OpenCode's schema, read the same way)
  pi           pi's session .jsonl (~/.pi/agent/sessions/--<cwd>--/): its
               id/parentId tree as branches, compactions as summary nodes
  openclaw     OpenClaw's openclaw-agent.sqlite (read-only; one session per
               OpenClaw session, --session ID picks one): pi's entries
  droid        a Factory Droid session (~/.factory/sessions/<cwd>/<id>.jsonl)
  crush        Crush's .crush/crush.db (read-only; one session per Crush
               session, --session ID picks one)

One conversation: DIR is the session. Several (a conversations.json, several
rollouts): DIR is a parent directory holding one session per conversation,
named from the conversation's sanitized id (never its title). An existing
session is never overwritten; --append adds to it instead, skipping nodes
whose id it already holds (so re-importing a log that grew adds only what is
new; a stored node that differs from the import is kept and reported). When
the earlier import ended inside a streamed request, or the log now places a
stored node after another one, the full node is appended as a new copy,
ID~2, and the branch continues from it; the stored one stays off the branch
(docs/FORMAT.md §1, "Re-importing a grown log"). Ids
come from the export (uuids, or the rollout's session id and line); request
bodies carry none, so theirs hash the conversation up to each message. A
failed import leaves no new session behind: it is written beside DIR and
renamed into place at the end; a failed --append commits nothing after the
last complete chunk of 5000 nodes.

The report says, per input record type, how many records were imported,
merged into another node (streamed parts of one message, usage counts) or
skipped, and why; nothing is dropped without being counted. Inline images
and documents are stored as a sha256 reference with their size, never their
bytes: the report counts them and the bytes left out (media_references,
media_bytes), and lists the Claude Code sub-agent files read beside a session
and those it spawned but that were not found. Warnings go to stderr. Input lines (and records of a JSON document) longer than
--max-line-bytes are an error, not an out-of-memory.`

func newImportCmd(f *Factory, runF func(*importOptions) error) *cobra.Command {
	opts := &importOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "import FILE... -o DIR",
		Short: "Import Claude Code, Codex, GitHub Copilot CLI, Gemini CLI, aider, Cline, OpenHands, OpenCode, ChatGPT, OpenAI or Anthropic transcripts",
		Long:  importLong + exitStatusHelp("  2 is also returned for malformed input: the error names file:line."),
		Example: `  ctxfold import ~/.claude/projects/p/1af7fc5e.jsonl -o ./s
  ctxfold import ~/.codex/sessions/2025/11/17/rollout-*.jsonl -o ./codex-sessions
  ctxfold import --from chatgpt conversations.json -o ./chatgpt
  ctxfold import .aider.chat.history.md -o ./aider   # one session per aider run
  ctxfold import …/globalStorage/saoudrizwan.claude-dev/tasks -o ./cline  # one session per task
  ctxfold import ~/.local/share/opencode/opencode.db -o ./opencode
  ctxfold import body.json --from anthropic -o ./s --json
  ctxfold import rollout.jsonl -o ./s --append     # add what the rollout gained since`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			if err := opts.check(); err != nil {
				return err
			}
			opts.JSON = f.IO.JSON
			opts.Env = f.clientEnv()
			opts.Store = f.writeOptions("import")
			// A bad models: table is reported by the commands that budget;
			// import only uses it to word its model warning.
			opts.Models, _ = f.configModels()
			if runF != nil {
				return runF(opts)
			}
			// An import streams: its live heap is one chunk of nodes and the
			// planner's line index, so it collects at liveGC's 100% as a
			// transcript file's refresh does (docs/BENCHMARKS.md, "the cold path").
			defer liveGC(f.Getenv)()
			return runImport(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.From, "from", importer.Auto, "format: "+strings.Join(importer.Formats(), ", "))
	fl.StringVarP(&opts.Out, "out", "o", "", "session directory (or parent directory for several conversations)")
	fl.BoolVar(&opts.Append, "append", false, "add to an existing session instead of refusing it")
	fl.Int64Var(&opts.MaxDecompressed, "max-decompressed-bytes", input.DefaultMaxDecompressedBytes, "largest size a zstd-compressed input may decompress to")
	fl.StringVar(&opts.Session, "session", "", "import only one session of a file holding several: its number N (an aider chat history) or the client's session id (a database)")
	_ = cmd.RegisterFlagCompletionFunc("from", fixedCompletion(importer.Formats()...))
	_ = cmd.MarkFlagDirname("out")
	return cmd
}

// check rejects flag values import cannot use.
func (opts *importOptions) check() error {
	if opts.MaxDecompressed <= 0 {
		return &UsageError{Err: fmt.Errorf("--max-decompressed-bytes must be positive, got %d", opts.MaxDecompressed)}
	}
	if _, _, err := opts.sessionPick(); err != nil {
		return err
	}
	if opts.Out == "" {
		return &UsageError{Err: errors.New("-o DIR is required")}
	}
	if !slices.Contains(importer.Formats(), opts.From) {
		return &UsageError{Err: fmt.Errorf("--from must be one of %s, got %q", strings.Join(importer.Formats(), ", "), opts.From)}
	}
	return nil
}

// sessionPick reads --session: a number picks the Nth session of a file
// holding several, anything else is the client's own session id.
func (opts *importOptions) sessionPick() (n int, id string, err error) {
	if opts.Session == "" {
		return 0, "", nil
	}
	if n, err := strconv.Atoi(opts.Session); err == nil {
		if n < 1 {
			return 0, "", &UsageError{Err: fmt.Errorf("--session must be a session number from 1 or a session id, got %d", n)}
		}
		return n, "", nil
	}
	return 0, opts.Session, nil
}

func (opts *importOptions) inputOptions() input.Options {
	n, id, _ := opts.sessionPick()
	return input.Options{MaxLineBytes: opts.Store.MaxLineBytes, Session: n, SessionID: id, MaxDecompressedBytes: opts.MaxDecompressed, Env: opts.Env}
}

func runImport(ctx context.Context, opts *importOptions) error {
	// A large export takes tens of seconds: a spinner counts the nodes.
	progress := report.NewProgress(opts.IO, "importing (nodes)", 0)
	rep, err := importer.Import(ctx, importer.Options{
		From: opts.From, Files: opts.Files, Out: opts.Out, Append: opts.Append,
		Store: opts.Store, Input: opts.inputOptions(),
		Progress: progress.Add, RefuseEmpty: true,
	})
	progress.Done()
	if err != nil {
		return err
	}
	for _, w := range rep.Warnings {
		warnf(opts.IO.ErrOut, "%s", fmt.Sprint(w))
	}
	if rep.WarningsDropped > 0 {
		warnf(opts.IO.ErrOut, "%d more warnings not shown", rep.WarningsDropped)
	}
	warned := map[string]bool{}
	for _, s := range rep.Sessions {
		if msg := modelNotice(s.Model, opts.Models); msg != "" && !warned[s.Model] && !recordsWindow(s.Dir) {
			warned[s.Model] = true
			warnf(opts.IO.ErrOut, "%s", msg)
		}
	}
	if opts.JSON {
		return report.JSON(opts.IO.Out, rep)
	}
	return writeImportReport(opts.IO.Out, rep, opts.IO.StdoutTTY)
}

// recordsWindow: the session records its window (the client's, or its
// configuration's for a custom model), so an unknown model needs no
// --window and its notice would mislead.
func recordsWindow(dir string) bool {
	meta, err := store.ReadMeta(dir)
	return err == nil && estimate.RecordedWindow(meta) > 0
}

// writeImportReport prints the sessions and the per-record tally: aligned
// columns with a header on a terminal, tab-separated lines when piped.
func writeImportReport(out io.Writer, rep *importer.Report, tty bool) error {
	w := out
	var tw *tabwriter.Writer
	if tty {
		tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		w = tw
	}
	if tty {
		fmt.Fprintf(w, "FORMAT\t%s\n\nSESSION\tNODES\tALREADY PRESENT\tHEAD\n", rep.Format)
	}
	for _, s := range rep.Sessions {
		if tty {
			fmt.Fprintf(w, "%s\t%d\t%d\t%s\n", s.Dir, s.Nodes, s.AlreadyPresent, render.TextSafe(s.Head))
		} else {
			fmt.Fprintf(w, "session\t%s\t%s\tnodes=%d\talready_present=%d\thead=%s\n", rep.Format, s.Dir, s.Nodes, s.AlreadyPresent, render.TextSafe(s.Head))
		}
	}
	// What was not copied, or was read beside the given files: media
	// kept only as a digest, sub-agent files found or missed.
	for _, s := range rep.Sessions {
		if tty {
			if s.MediaReferences > 0 {
				fmt.Fprintf(w, "\n%s: %d media kept as sha256 references; %s bytes not stored in the session\n", s.Dir, s.MediaReferences, report.Thousands(int(s.MediaBytes)))
			}
			for _, f := range s.AttachedFiles {
				fmt.Fprintf(w, "%s: read sub-agent file %s\n", s.Dir, render.TextSafe(f))
			}
			for _, f := range s.MissingFiles {
				fmt.Fprintf(w, "%s: missing sub-agent file %s\n", s.Dir, render.TextSafe(f))
			}
			continue
		}
		if s.MediaReferences > 0 {
			fmt.Fprintf(w, "media\t%s\treferences=%d\tbytes=%d\n", s.Dir, s.MediaReferences, s.MediaBytes)
		}
		for _, f := range s.AttachedFiles {
			fmt.Fprintf(w, "attached\t%s\t%s\n", s.Dir, render.TextSafe(f))
		}
		for _, f := range s.MissingFiles {
			fmt.Fprintf(w, "missing\t%s\t%s\n", s.Dir, render.TextSafe(f))
		}
	}
	if tty {
		fmt.Fprintf(w, "\nRECORD\tIMPORTED\tMERGED\tSKIPPED\tWHY\n")
	}
	for _, r := range rep.Records {
		why := make([]string, len(r.Reasons))
		for i, reason := range r.Reasons {
			why[i] = fmt.Sprintf("%s %d: %s", reason.Outcome, reason.Count, render.TextSafe(reason.Reason))
		}
		prefix := "record\t"
		if tty {
			prefix = ""
		}
		fmt.Fprintf(w, "%s%s\t%d\t%d\t%d\t%s\n", prefix, render.TextSafe(r.Record), r.Imported, r.Merged, r.Skipped, strings.Join(why, "; "))
	}
	if tw != nil {
		return tw.Flush()
	}
	return nil
}
