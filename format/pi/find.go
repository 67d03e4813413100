package pi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
)

// ProjectsOf: pi keeps a folder per project under its sessions folder
// (<sessions>/--<cwd>--/), and OpenClaw, which wrote pi's format before
// its database, a sessions folder per agent (agents/<agent>/sessions/,
// its agents being its projects) (input.ProjectsFunc).
func ProjectsOf(dir string) (root, sub string, ok bool) {
	parent := filepath.Dir(dir)
	if filepath.Base(dir) == "sessions" && filepath.Base(filepath.Dir(parent)) == "agents" {
		return filepath.Dir(parent), "sessions", true
	}
	if filepath.Base(parent) == "sessions" {
		return parent, "", true
	}
	return "", "", false
}

// Find lists pi's sessions: <sessions>/--<cwd>--/*.jsonl, where sessions
// is $PI_CODING_AGENT_SESSION_DIR, else $PI_CODING_AGENT_DIR/sessions, else
// ~/.pi/agent/sessions (pi's config.js). Project and session id come from
// each file's header, the model from the last one its tail names.
func Find(env input.Env) ([]input.Found, error) {
	dir := env.Get("PI_CODING_AGENT_SESSION_DIR")
	if dir == "" {
		agent := env.Get("PI_CODING_AGENT_DIR")
		if agent == "" {
			agent = filepath.Join(env.Home, ".pi", "agent")
		}
		dir = filepath.Join(agent, "sessions")
	}
	projects, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []input.Found
	for _, p := range projects {
		if !p.IsDir() {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(dir, p.Name(), "*.jsonl"))
		sort.Strings(files)
		for _, file := range files {
			if f, ok := Describe(file); ok {
				out = append(out, f)
			}
		}
	}
	return out, nil
}

// Describe reads what a session file in pi's format says cheaply: its
// header and the model its last 64 KiB name; not ok for a file that is
// not one (or a symlink). OpenClaw's own JSONL sessions are in this format
// (openclaw.FindWith).
func Describe(file string) (input.Found, bool) {
	st, err := os.Lstat(file)
	if err != nil || !st.Mode().IsRegular() {
		return input.Found{}, false
	}
	f, err := os.Open(file)
	if err != nil {
		return input.Found{}, false
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if !Detect(head) {
		return input.Found{}, false
	}
	line, _, _ := bytes.Cut(head, []byte("\n"))
	var h struct {
		ID  string `json:"id"`
		Cwd string `json:"cwd"`
	}
	_ = json.Unmarshal(line, &h)
	fd := input.Found{File: file, SessionID: h.ID, Project: h.Cwd, Updated: st.ModTime(), Bytes: st.Size()}
	const tail = 64 << 10
	off := st.Size() - tail
	if off < 0 {
		off = 0
	}
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err == nil || errors.Is(err, io.EOF) {
		fd.Model = lastModel(buf)
	}
	return fd, true
}

// lastModel is the last model an assistant message or a model change in
// b names.
func lastModel(b []byte) string {
	for _, key := range []string{`"model":"`, `"modelId":"`} {
		if i := bytes.LastIndex(b, []byte(key)); i >= 0 {
			rest := b[i+len(key):]
			if j := bytes.IndexByte(rest, '"'); j >= 0 && !strings.ContainsRune(string(rest[:j]), '\\') {
				return string(rest[:j])
			}
		}
	}
	return ""
}
