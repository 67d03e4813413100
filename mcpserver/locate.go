package mcpserver

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// Locate says which transcript the server serves, resolved at every call
// (the client starts the server before its session has a file).
type Locate struct {
	// Transcript is an explicit file (--transcript, CTXFOLD_TRANSCRIPT).
	Transcript string
	// Session is a session directory to serve instead of a transcript.
	Session string
	// Getenv reads the client's environment; Home and Cwd are the user's
	// home and the server's working directory (the project).
	Getenv func(string) string
	Home   string
	Cwd    string
}

// errNoTranscript: nothing tells which session this is.
var errNoTranscript = errors.New("no transcript found for this session: start 'ctxfold mcp' with --transcript FILE " +
	"(or CTXFOLD_TRANSCRIPT), or run it from the project directory of a Claude Code session")

// file resolves the transcript: the explicit one; else Claude Code's
// session (CLAUDE_CODE_SESSION_ID) in its projects folder; else the most
// recently written transcript of the project directory
// (CLAUDE_PROJECT_DIR, else the working directory) in
// ~/.claude/projects/<slug>/.
func (l Locate) file() (string, error) {
	if l.Transcript != "" {
		return l.Transcript, nil
	}
	getenv := l.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if t := getenv("CTXFOLD_TRANSCRIPT"); t != "" {
		return t, nil
	}
	if getenv("CTXFOLD_CLIENT") == "codex" {
		return l.codexRollout(getenv)
	}
	projects := filepath.Join(l.Home, ".claude", "projects")
	if id := getenv("CLAUDE_CODE_SESSION_ID"); id != "" && !strings.ContainsAny(id, `/\`) {
		if m, _ := filepath.Glob(filepath.Join(projects, "*", id+".jsonl")); len(m) > 0 {
			return m[0], nil
		}
	}
	dir := getenv("CLAUDE_PROJECT_DIR")
	if dir == "" {
		dir = l.Cwd
	}
	if dir == "" || l.Home == "" {
		return "", errNoTranscript
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	entries, err := os.ReadDir(filepath.Join(projects, slug(dir)))
	if err != nil {
		return "", errNoTranscript
	}
	best, bestTime := "", int64(0)
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") || strings.HasPrefix(e.Name(), "agent-") {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		if t := fi.ModTime().UnixNano(); t > bestTime {
			best, bestTime = filepath.Join(projects, slug(dir), e.Name()), t
		}
	}
	if best == "" {
		return "", errNoTranscript
	}
	return best, nil
}

// slug is Claude Code's project folder name for a directory: every
// character other than an ASCII letter or digit becomes '-'.
func slug(dir string) string {
	var b strings.Builder
	for _, r := range dir {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// codexRollout is the most recently written rollout of Codex's sessions
// folder ($CODEX_HOME/sessions, else ~/.codex/sessions): the session that
// started the server writes it.
func (l Locate) codexRollout(getenv func(string) string) (string, error) {
	home := getenv("CODEX_HOME")
	if home == "" {
		home = filepath.Join(l.Home, ".codex")
	}
	best, bestTime := "", int64(0)
	_ = filepath.WalkDir(filepath.Join(home, "sessions"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasPrefix(d.Name(), "rollout-") || !strings.HasSuffix(d.Name(), ".jsonl") {
			return nil
		}
		if fi, err := d.Info(); err == nil && fi.ModTime().UnixNano() > bestTime {
			best, bestTime = p, fi.ModTime().UnixNano()
		}
		return nil
	})
	if best == "" {
		return "", errNoTranscript
	}
	return best, nil
}
