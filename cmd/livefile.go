package cmd

import (
	"context"
	"fmt"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
)

// liveArgs replaces every argument that names a regular file (a
// transcript a client is writing) by its cache session, brought up to date
// first (live, docs/LIVE.md); directories pass through. The
// entries are keyed by the cache session they gave, for --json to name the
// file beside it. A line on a terminal's stderr says what the refresh did.
func (f *Factory) liveArgs(ctx context.Context, args []string) ([]string, map[string]*live.Entry, error) {
	var entries map[string]*live.Entry
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if !live.IsTranscriptFile(a) {
			continue
		}
		dir, err := f.cacheDir()
		if err != nil {
			return nil, nil, err
		}
		restore := liveGC(f.Getenv)
		e, err := live.Open(ctx, a, live.Options{CacheDir: dir, Store: f.writeOptions("import"),
			Input: f.liveInput()})
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

// fileOf is the transcript file an entry came from, "" for a session
// directory argument (nil entry): --json's "file", beside "session".
func fileOf(e *live.Entry) string {
	if e == nil {
		return ""
	}
	return e.File
}

// liveArg is liveArgs for a command of one session.
func (f *Factory) liveArg(ctx context.Context, arg string) (string, *live.Entry, error) {
	out, entries, err := f.liveArgs(ctx, []string{arg})
	if err != nil {
		return "", nil, err
	}
	return out[0], entries[out[0]], nil
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

func (f *Factory) liveInput() input.Options {
	return input.Options{MaxLineBytes: f.Config.GetInt("max-line-bytes")}
}
