package claudecode

import (
	"path/filepath"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
)

// peekBytes is how much of a transcript's start and end Find reads: the
// first lines carry the working directory, the last ones the model.
const peekBytes = 64 << 10

// ProjectsOf: Claude Code keeps a folder per project under
// <config>/projects/ (input.ProjectsFunc).
func ProjectsOf(dir string) (root, sub string, ok bool) {
	if parent := filepath.Dir(dir); filepath.Base(parent) == "projects" {
		return parent, "", true
	}
	return "", "", false
}

// Find lists Claude Code's sessions: $CLAUDE_CONFIG_DIR (else ~/.claude)
// /projects/<project>/<session>.jsonl. Sub-agent files (agent-*.jsonl,
// <session>/subagents/) belong to their session and are not listed.
func Find(env input.Env) ([]input.Found, error) {
	root := env.Get("CLAUDE_CONFIG_DIR")
	if root == "" {
		if env.Home == "" {
			return nil, nil
		}
		root = filepath.Join(env.Home, ".claude")
	}
	files, err := filepath.Glob(filepath.Join(root, "projects", "*", "*.jsonl"))
	if err != nil {
		return nil, err
	}
	var out []input.Found
	for _, path := range files {
		name := filepath.Base(path)
		if strings.HasPrefix(name, "agent-") {
			continue
		}
		head, tail, fi, err := input.Peek(path, peekBytes)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		out = append(out, input.Found{
			File: path, SessionID: strings.TrimSuffix(name, ".jsonl"),
			Project: input.FirstString(head, "cwd", nil),
			Model:   input.LastString(tail, "model", realModel),
			Updated: fi.ModTime(), Bytes: fi.Size(),
		})
	}
	return out, nil
}

// realModel: Claude Code writes "<synthetic>" as the model of the
// messages it makes up itself (an API error, an interruption).
func realModel(m string) bool { return !strings.HasPrefix(m, "<") }
