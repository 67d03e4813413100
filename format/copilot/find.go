package copilot

import (
	"bufio"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/ctxfold/ctxfold/format/input"
)

// Dir is where the client keeps its state: $COPILOT_HOME, else ~/.copilot
// (the client reads COPILOT_HOME for its whole config directory).
func Dir(env input.Env) string {
	if d := env.Get("COPILOT_HOME"); d != "" {
		return d
	}
	return filepath.Join(env.Home, ".copilot")
}

// Find lists the sessions under Dir(env)/session-state/<id>/events.jsonl,
// newest first, with the working directory and model their session.start
// names. Only regular files count (a symlink could point anywhere).
func Find(env input.Env) ([]input.Found, error) {
	root := filepath.Join(Dir(env), "session-state")
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []input.Found
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		file := filepath.Join(root, e.Name(), "events.jsonl")
		st, err := os.Lstat(file)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		f := input.Found{File: file, SessionID: e.Name(), Updated: st.ModTime(), Bytes: st.Size()}
		f.Project, f.Model = head(file)
		out = append(out, f)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Updated.After(out[j].Updated) })
	return out, nil
}

// head reads the session.start event on the first line: its working
// directory and selected model ("" when it names none).
func head(file string) (cwd, model string) {
	f, err := os.Open(file)
	if err != nil {
		return "", ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	if !sc.Scan() {
		return "", ""
	}
	var ev struct {
		Type string `json:"type"`
		Data struct {
			SelectedModel string `json:"selectedModel"`
			Context       struct {
				Cwd string `json:"cwd"`
			} `json:"context"`
		} `json:"data"`
	}
	if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Type != "session.start" {
		return "", ""
	}
	return ev.Data.Context.Cwd, ev.Data.SelectedModel
}
