package cmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/transcript"
)

// The file-argument step, written once: a command that reads a session
// takes a session directory or a client's transcript file, and a
// transcript file is read through its cache session, brought up to date
// first (docs/LIVE.md). sessionArg serves the commands of one session
// (render, graph, search, audit, compact --dry-run), sessionArgs those of
// several (estimate, verify, audit), openArg each run of a many-file
// fan-out; all three open the file through openLive.

// addFileArgFlags gives a command that reads a session the import's
// --from for its transcript-file arguments (the "not a transcript" hint
// says "name it with --from", so every command taking a file accepts it)
// and --session, the session of a client's database to read (docs/LIVE.md,
// "Databases"; by default the most recently active one).
func addFileArgFlags(cmd *cobra.Command, f *Factory) {
	cmd.Flags().StringVar(&f.liveFrom, "from", importer.Auto, "format of a transcript file argument: "+strings.Join(importer.Formats(), ", ")+" (a session directory ignores it)")
	_ = cmd.RegisterFlagCompletionFunc("from", fixedCompletion(importer.Formats()...))
	cmd.Flags().StringVar(&f.liveSession, "session", "", "the session of a database argument to read, by the client's id (default: the most recently active; ctxfold sessions lists them)")
}

// checkFrom rejects a --from that names no format.
func (f *Factory) checkFrom() error {
	if f.liveFrom != "" && !slices.Contains(importer.Formats(), f.liveFrom) {
		return &UsageError{Err: fmt.Errorf("--from must be one of %s, got %q", strings.Join(importer.Formats(), ", "), f.liveFrom)}
	}
	return nil
}

// openLive brings a transcript file's cache session up to date.
func (f *Factory) openLive(ctx context.Context, file string) (*live.Entry, error) {
	lo, err := f.liveOptions()
	if err != nil {
		return nil, err
	}
	return live.Open(ctx, file, lo)
}

// liveOptions are how a command reads a transcript file through its cache
// session: the cache folder, the import's write options, the input limits
// and the collector setting of a resumed refresh.
func (f *Factory) liveOptions() (live.Options, error) {
	if err := f.checkFrom(); err != nil {
		return live.Options{}, err
	}
	dir, err := f.cacheDir()
	if err != nil {
		return live.Options{}, err
	}
	maxBytes, err := f.cacheMaxBytes()
	if err != nil {
		return live.Options{}, err
	}
	return live.Options{CacheDir: dir, MaxBytes: maxBytes, From: f.liveFrom, Store: f.writeOptions("import"), Input: f.liveInput(), ResumeGC: resumeGC(f.Getenv),
		Prepare: f.prepareLive}, nil
}

// sessionArg is the file-argument step of a command of one session: the
// session directory to open and, when arg is a transcript file, the file
// (--json's "file", beside "session"; "" for a session directory). The
// cache entry is held until the command ends.
func (f *Factory) sessionArg(ctx context.Context, arg string) (dir, file string, err error) {
	if err := f.checkFrom(); err != nil {
		return "", "", err
	}
	out, entries, err := f.liveArgs(ctx, []string{arg})
	if err != nil {
		return "", "", err
	}
	return out[0], fileOf(entries[out[0]]), nil
}

// sessionArgs are the arguments of a command of several sessions after
// the file-argument step.
type sessionArgs struct {
	// Dirs: with Many, the expanded arguments as given (each transcript
	// file is opened inside its own parallel run, openArg); otherwise
	// each transcript file is replaced by its cache session.
	Dirs []string
	// Live maps a cache session in Dirs to the entry it came from
	// (not Many).
	Live map[string]*live.Entry
	// Many: a folder, a pattern or several arguments with a transcript
	// file among them (expandArgs).
	Many bool
}

// sessionArgs expands args (expandArgs; a bad pattern or folder is a
// *UsageError) and, unless they are many, opens each transcript file.
func (f *Factory) sessionArgs(ctx context.Context, args []string) (sessionArgs, error) {
	if err := f.checkFrom(); err != nil {
		return sessionArgs{}, err
	}
	args, many, err := expandArgs(args)
	if err != nil {
		return sessionArgs{}, &UsageError{Err: err}
	}
	if many {
		return sessionArgs{Dirs: args, Many: true}, nil
	}
	dirs, entries, err := f.liveArgs(ctx, args)
	if err != nil {
		return sessionArgs{}, err
	}
	return sessionArgs{Dirs: dirs, Live: entries}, nil
}

// liveArgs replaces every argument that names a regular file (a
// transcript a client is writing) by its cache session, brought up to date
// first; directories pass through. The entries are keyed by the cache
// session they gave, for --json to name the file beside it. A line on a
// terminal's stderr says what the refresh did.
func (f *Factory) liveArgs(ctx context.Context, args []string) ([]string, map[string]*live.Entry, error) {
	var entries map[string]*live.Entry
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if err := missingFile(a); err != nil {
			return nil, nil, err
		}
		if !live.IsTranscriptFile(a) {
			continue
		}
		restore := liveGC(f.Getenv)
		e, err := f.openLive(ctx, a)
		restore()
		if err != nil {
			return nil, nil, err
		}
		if entries == nil {
			entries = map[string]*live.Entry{}
		}
		entries[e.Session] = e
		f.rememberLive(e.Session, e.File)
		f.liveEntries = append(f.liveEntries, e)
		out[i] = e.Session
		noteLive(f.IO, a, e)
	}
	return out, entries, nil
}

// openArg is the step for one run of a many-file fan-out: a transcript
// file is brought up to date inside the argument's own run, so many files
// import in parallel; a session directory passes through with a nil entry.
func (f *Factory) openArg(ctx context.Context, arg string) (string, *live.Entry, error) {
	if err := missingFile(arg); err != nil {
		return "", nil, err
	}
	if !live.IsTranscriptFile(arg) {
		return arg, nil, nil
	}
	e, err := f.openLive(ctx, arg)
	if err != nil {
		return "", nil, err
	}
	return e.Session, e, nil
}

// missingFile: an argument that does not exist and is named like a file
// (it has an extension: s.jsonl, rollout.jsonl.zst) was meant as a
// transcript file, and is named as one — not as a missing session
// directory (issue 44).
func missingFile(arg string) error {
	if filepath.Ext(arg) == "" {
		return nil
	}
	if _, err := os.Lstat(arg); errors.Is(err, fs.ErrNotExist) {
		return &transcript.ParseError{File: arg, Msg: "no such file (a transcript file or a session directory was expected)"}
	}
	return nil
}

// fileOf is the transcript file an entry came from, "" for a session
// directory argument (nil entry): --json's "file", beside "session".
func fileOf(e *live.Entry) string {
	if e == nil {
		return ""
	}
	return e.File
}

func noteLive(ios *report.IOStreams, arg string, e *live.Entry) {
	if !ios.StderrTTY || ios.JSON {
		return
	}
	what := e.Update
	if e.NewNodes > 0 {
		what = fmt.Sprintf("%s, %d new nodes", what, e.NewNodes)
	}
	fmt.Fprintf(ios.ErrOut, "ctxfold: %s → cache session %s (%s)\n", render.TextSafe(arg), e.Session, what)
}

// clientEnv is where the clients' configuration lives (a custom model's
// window, transcript.WindowReporter): HOME and the clients' env overrides.
func (f *Factory) clientEnv() input.Env { return clientEnv(f.Getenv) }

func clientEnv(getenv func(string) string) input.Env {
	if getenv == nil {
		return input.Env{}
	}
	return input.Env{Home: getenv("HOME"), Getenv: getenv}
}

func (f *Factory) liveInput() input.Options {
	return input.Options{MaxLineBytes: f.global.MaxLineBytes, SessionID: f.liveSession, Env: f.clientEnv()}
}
