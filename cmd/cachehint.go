package cmd

import (
	"errors"
	"regexp"
	"strings"

	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/store"
)

// A command given a transcript file runs on the file's cache session
// (docs/LIVE.md), so an error can name that session, and its hint can
// suggest a command on it — 'ctxfold compact …/ctxfold/live/…/session',
// which the store refuses (a cache session is rebuilt from the file; issue
// 29). fileHints rewrites such an error for the person who typed the file:
// the cache session's path becomes the file's, and a suggested command
// that writes becomes the import that makes a session of one's own first.

// writingCommands are the commands that write a session: a hint that
// suggests one on a cache session is rewritten to import the file first.
var writingCommands = []string{"compact", "checkout", "pin", "unpin", "append", "repair"}

// fileHintError is an error about a cache session, told in terms of the
// transcript file it stands for.
type fileHintError struct {
	err       error
	msg, hint string
}

func (e *fileHintError) Error() string { return e.msg }
func (e *fileHintError) Unwrap() error { return e.err }
func (e *fileHintError) Hint() string  { return e.hint }

// rememberLive records which file a cache session stands for (liveArgs).
func (f *Factory) rememberLive(session, file string) {
	if f.liveFiles == nil {
		f.liveFiles = map[string]string{}
	}
	f.liveFiles[session] = file
}

// fileHints returns err told in terms of the transcript files the command
// was given instead of their cache sessions (unchanged when it names none).
func (f *Factory) fileHints(err error) error {
	var refused *store.CacheSessionError
	if errors.As(err, &refused) && refused.File == "" {
		refused.File = f.liveFiles[refused.Dir]
		if refused.File == "" {
			refused.File = live.SourceFile(refused.Dir)
		}
	}
	var h interface{ Hint() string }
	msg, hint := err.Error(), ""
	if errors.As(err, &h) {
		hint = h.Hint()
	}
	newMsg, newHint := msg, hint
	for session, file := range f.liveFiles {
		newMsg = namePath(newMsg, session, file)
		newHint = fileHint(newHint, session, file, len(f.liveFiles) == 1)
	}
	if newMsg == msg && newHint == hint {
		return err
	}
	return &fileHintError{err: err, msg: newMsg, hint: newHint}
}

// fileHint rewrites one hint: a writing command on session becomes the
// import of file first, then that command on the new directory; any other
// mention of session (a read-only command) names file, which those
// commands take. A writing command named without a path ("compact the
// session ('ctxfold compact')") is the file's only when it is the one
// file the command was given (only).
func fileHint(hint, session, file string, only bool) string {
	for _, w := range writingCommands {
		cmds := []string{"'ctxfold " + w + " " + session + "'"}
		if only {
			cmds = append(cmds, "'ctxfold "+w+"'")
		}
		for _, cmd := range cmds {
			hint = strings.ReplaceAll(hint, cmd, "'ctxfold import "+file+" -o DIR', then 'ctxfold "+w+" DIR'")
		}
	}
	return namePath(hint, session, file)
}

// namePath replaces session by file where it is the whole path (not a
// file inside the session, such as its nodes.jsonl).
func namePath(s, session, file string) string {
	if !strings.Contains(s, session) {
		return s
	}
	re := regexp.MustCompile(regexp.QuoteMeta(session) + `($|[^/\w.-])`)
	return re.ReplaceAllStringFunc(s, func(m string) string {
		return file + m[len(session):]
	})
}

// entryError is err told in terms of one argument's transcript file: a
// many-file run (estimate DIR, audit DIR) reports each argument's error
// itself, where Run's fileHints does not see it.
func entryError(err error, e *live.Entry) error {
	if err == nil || e == nil {
		return err
	}
	var h interface{ Hint() string }
	msg, hint := err.Error(), ""
	if errors.As(err, &h) {
		hint = h.Hint()
	}
	newMsg, newHint := namePath(msg, e.Session, e.File), fileHint(hint, e.Session, e.File, false)
	if newMsg == msg && newHint == hint {
		return err
	}
	return &fileHintError{err: err, msg: newMsg, hint: newHint}
}
