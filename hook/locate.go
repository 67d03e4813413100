package hook

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/osfile"
)

// locate resolves the transcript a hook input names: its transcript_path
// (or the one the dialect finds from the input: Copilot CLI's session id)
// (session is its session_id when that file is a store of several
// sessions, a SQLite database), else — for a dialect whose sessions live
// in such a store (OpenCode, Kilo: their plugin knows the session's id,
// not the database's path) — the store importer.Find lists the session
// under; that store becomes in's transcript_path (the recall hint names
// it).
func locate(in *Input, d Dialect, env input.Env) (abs, session string, err error) {
	if in.TranscriptPath == "" && d.Transcript != nil {
		in.TranscriptPath = d.Transcript(*in, env.Get)
	}
	if in.TranscriptPath != "" {
		if abs, err = filepath.Abs(in.TranscriptPath); err != nil {
			return "", "", err
		}
		if in.SessionID != "" && isStore(abs) {
			session = in.SessionID
		}
		return abs, session, nil
	}
	if d.Format == "" || in.SessionID == "" {
		return "", "", errors.New("hook input has no transcript_path")
	}
	found, errs := importer.Find(env, d.Format)
	for _, f := range found {
		if f.SessionID == in.SessionID {
			abs, err := filepath.Abs(f.File)
			in.TranscriptPath = abs
			return abs, f.SessionID, err
		}
	}
	if len(errs) > 0 {
		return "", "", fmt.Errorf("session %s: %w", in.SessionID, errors.Join(errs...))
	}
	return "", "", fmt.Errorf("session %s: not found among %s's sessions (%d listed)", in.SessionID, d.Name, len(found))
}

// isStore reports whether the regular file at path is a SQLite database
// (read without following a link or blocking on a FIFO).
func isStore(path string) bool {
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	f, err := osfile.OpenNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	return input.IsSQLite(head[:n])
}

// stateKey keys the hook state of a transcript file, or of one session
// of a store.
func stateKey(abs, session string) string {
	if session == "" {
		return abs
	}
	return abs + "\x00session=" + session
}

// recallArg is how `ctxfold search` names the session: its file, and the
// session's id when the file is a store of several.
func recallArg(in Input) string {
	if in.SessionID != "" && isStore(in.TranscriptPath) {
		return in.TranscriptPath + " --session " + in.SessionID
	}
	return in.TranscriptPath
}
