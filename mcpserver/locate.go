package mcpserver

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
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
	"(or CTXFOLD_TRANSCRIPT), or run it from the project directory of a Claude Code (or, with CTXFOLD_CLIENT=codex, gemini, qwen, copilot or droid, a Codex, Gemini CLI, Qwen Code, Copilot CLI or Factory Droid) session")

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
	switch client := getenv("CTXFOLD_CLIENT"); client {
	case "codex":
		return l.codexRollout(getenv)
	case "gemini":
		return l.geminiSession()
	case "", "claude-code":
	default:
		// Any other client is named by its importer's format and found
		// through that format's Find (setup writes it: setup.Client.Format).
		return l.foundSession(getenv, client)
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

// codexRollout is the session's rollout in Codex's sessions folder
// ($CODEX_HOME, which setup names in the server's environment, else
// ~/.codex): the most recently written one whose session was started in
// the server's working directory (Codex starts its MCP servers in the
// session's cwd, and passes them no session id), else the most recently
// written one.
func (l Locate) codexRollout(getenv func(string) string) (string, error) {
	home := getenv("CODEX_HOME")
	if home == "" {
		home = filepath.Join(l.Home, ".codex")
	}
	type rollout struct {
		path string
		mod  int64
	}
	var all []rollout
	_ = filepath.WalkDir(filepath.Join(home, "sessions"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasPrefix(d.Name(), "rollout-") || !strings.HasSuffix(d.Name(), ".jsonl") {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			all = append(all, rollout{p, fi.ModTime().UnixNano()})
		}
		return nil
	})
	if len(all) == 0 {
		return "", errNoTranscript
	}
	sort.Slice(all, func(i, j int) bool { return all[i].mod > all[j].mod })
	cwd := l.Cwd
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = real
	}
	for _, r := range all[:min(len(all), maxRolloutsChecked)] {
		if c := rolloutCwd(r.path); c != "" && (c == l.Cwd || c == cwd) {
			return r.path, nil
		}
	}
	return all[0].path, nil
}

// maxRolloutsChecked bounds how many recent rollouts are opened to find
// the one of the server's directory.
const maxRolloutsChecked = 64

// rolloutCwd is the cwd of a rollout's session_meta record, its first
// line ("" when it cannot be read).
func rolloutCwd(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	// The first record carries the base instructions: tens of KB.
	line, _ := bufio.NewReaderSize(io.LimitReader(f, 1<<20), 64<<10).ReadBytes('\n')
	var meta struct {
		Type    string `json:"type"`
		Payload struct {
			Cwd string `json:"cwd"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &meta) != nil || meta.Type != "session_meta" {
		return ""
	}
	return meta.Payload.Cwd
}

// geminiSession is the most recently written session of the server's
// project in Gemini CLI's folder: ~/.gemini/projects.json maps the project
// directory to its folder under ~/.gemini/tmp (recorded with 0.61; a
// folder's .project_root names the directory too), whose chats/ holds
// session-*.jsonl (sub-agents' files are in sub-folders). Gemini CLI
// starts its MCP servers in the project directory and passes no session id.
func (l Locate) geminiSession() (string, error) {
	if l.Home == "" || l.Cwd == "" {
		return "", errNoTranscript
	}
	base := filepath.Join(l.Home, ".gemini")
	dirs := []string{l.Cwd}
	if real, err := filepath.EvalSymlinks(l.Cwd); err == nil && real != l.Cwd {
		dirs = append(dirs, real)
	}
	folder := ""
	if b, err := os.ReadFile(filepath.Join(base, "projects.json")); err == nil {
		var reg struct {
			Projects map[string]string `json:"projects"`
		}
		if json.Unmarshal(b, &reg) == nil {
			for _, d := range dirs {
				if name := reg.Projects[d]; name != "" && !strings.ContainsAny(name, `/\`) && name != ".." {
					folder = filepath.Join(base, "tmp", name)
					break
				}
			}
		}
	}
	if folder == "" {
		entries, _ := os.ReadDir(filepath.Join(base, "tmp"))
		for _, e := range entries {
			root, err := os.ReadFile(filepath.Join(base, "tmp", e.Name(), ".project_root"))
			if err == nil && slices.Contains(dirs, strings.TrimSpace(string(root))) {
				folder = filepath.Join(base, "tmp", e.Name())
				break
			}
		}
	}
	if folder == "" {
		return "", errNoTranscript
	}
	entries, err := os.ReadDir(filepath.Join(folder, "chats"))
	if err != nil {
		return "", errNoTranscript
	}
	best, bestTime := "", int64(0)
	for _, e := range entries {
		if e.IsDir() || !strings.HasPrefix(e.Name(), "session-") || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.ModTime().UnixNano() > bestTime {
			best, bestTime = filepath.Join(folder, "chats", e.Name()), fi.ModTime().UnixNano()
		}
	}
	if best == "" {
		return "", errNoTranscript
	}
	return best, nil
}
