package copilot

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
)

// peekBytes is how much of a log's start and end Find reads.
const peekBytes = 64 << 10

// Dir is where the client keeps its state: $COPILOT_HOME, else ~/.copilot
// (the client reads COPILOT_HOME for its whole config directory).
func Dir(env input.Env) string {
	if d := env.Get("COPILOT_HOME"); d != "" {
		return d
	}
	if env.Home == "" {
		return ""
	}
	return filepath.Join(env.Home, ".copilot")
}

// Find lists the sessions under Dir(env)/session-state/<id>/events.jsonl
// (and the older session-state/<id>.jsonl),
// with the working directory session.start names and the last model the
// log names. Only regular files count (a symlink could point anywhere).
func Find(env input.Env) ([]input.Found, error) {
	dir := Dir(env)
	if dir == "" {
		return nil, nil
	}
	root := filepath.Join(dir, "session-state")
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []input.Found
	for _, e := range entries {
		file, id := filepath.Join(root, e.Name(), "events.jsonl"), e.Name()
		if !e.IsDir() {
			// Before the per-session folders (0.0.3xx): <id>.jsonl.
			if filepath.Ext(id) != ".jsonl" {
				continue
			}
			file, id = filepath.Join(root, id), strings.TrimSuffix(id, ".jsonl")
		}
		if st, err := os.Lstat(file); err != nil || !st.Mode().IsRegular() {
			continue
		}
		head, tail, fi, err := input.Peek(file, peekBytes)
		if err != nil {
			continue
		}
		out = append(out, input.Found{File: file, SessionID: id, Project: input.FirstString(head, "cwd", nil),
			Model: input.LastString(tail, "model", nil), Updated: fi.ModTime(), Bytes: fi.Size()})
	}
	return out, nil
}
