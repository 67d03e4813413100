package codex

import (
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
)

// peekBytes is how much of a rollout's start and end Find reads: the
// session_meta line (with the base instructions, tens of KB) carries the
// working directory, the last turn_context the model.
const peekBytes = 128 << 10

// rolloutID is the session id at the end of a rollout's file name.
var rolloutID = regexp.MustCompile(`([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl(\.zst)?$`)

// Find lists Codex's rollouts: $CODEX_HOME (else ~/.codex)/sessions/
// YYYY/MM/DD/rollout-*.jsonl and the ones Codex archived
// (archived_sessions/), compressed (.jsonl.zst) ones included; a
// compressed one is listed without its directory and model.
func Find(env input.Env) ([]input.Found, error) {
	root := env.Get("CODEX_HOME")
	if root == "" {
		if env.Home == "" {
			return nil, nil
		}
		root = filepath.Join(env.Home, ".codex")
	}
	var out []input.Found
	for _, sub := range []string{"sessions", "archived_sessions"} {
		_ = filepath.WalkDir(filepath.Join(root, sub), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasPrefix(d.Name(), "rollout-") {
				return nil
			}
			if f, ok := describe(path, d); ok {
				out = append(out, f)
			}
			return nil
		})
	}
	return out, nil
}

func describe(path string, d fs.DirEntry) (input.Found, bool) {
	name := d.Name()
	f := input.Found{File: path}
	if m := rolloutID.FindStringSubmatch(name); m != nil {
		f.SessionID = m[1]
	}
	switch {
	case strings.HasSuffix(name, ".jsonl"):
		head, tail, fi, err := input.Peek(path, peekBytes)
		if err != nil || !fi.Mode().IsRegular() {
			return f, false
		}
		f.Project = input.FirstString(head, "cwd", nil)
		f.Model = input.LastString(tail, "model", nil)
		f.Updated, f.Bytes = fi.ModTime(), fi.Size()
	case strings.HasSuffix(name, ".jsonl.zst"):
		fi, err := d.Info()
		if err != nil || !fi.Mode().IsRegular() {
			return f, false
		}
		f.Updated, f.Bytes = fi.ModTime(), fi.Size()
	default:
		return f, false
	}
	return f, true
}
