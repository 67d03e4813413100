package qwen

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
)

// peekBytes is how much of a session's start and end Find reads.
const peekBytes = 64 << 10

// Dir is where Qwen Code keeps its runtime files, projects/ included
// (its Storage.getRuntimeBaseDir): $QWEN_RUNTIME_DIR, else the user
// settings' advanced.runtimeOutputDir when it is absolute or under ~ (a
// relative one resolves per project, which a machine-wide listing cannot
// follow), else the global folder: $QWEN_HOME, else ~/.qwen.
func Dir(env input.Env) string {
	if d := env.Get("QWEN_RUNTIME_DIR"); d != "" {
		return env.ExpandHome(d)
	}
	global := filepath.Join(env.Home, ".qwen")
	if d := env.Get("QWEN_HOME"); d != "" {
		global = env.ExpandHome(d)
	}
	if d := runtimeOutputDir(filepath.Join(global, "settings.json")); d != "" {
		if d = env.ExpandHome(d); filepath.IsAbs(d) {
			return d
		}
	}
	return global
}

// runtimeOutputDir is the settings file's advanced.runtimeOutputDir, ""
// when the file is missing, not plain JSON or does not set it.
func runtimeOutputDir(settings string) string {
	data, err := os.ReadFile(settings)
	if err != nil {
		return ""
	}
	var s struct {
		Advanced struct {
			RuntimeOutputDir string `json:"runtimeOutputDir"`
		} `json:"advanced"`
	}
	if json.Unmarshal(data, &s) != nil {
		return ""
	}
	return s.Advanced.RuntimeOutputDir
}

// Find lists the sessions Qwen Code keeps on this machine:
// projects/<project>/chats/<session id>.jsonl under Dir, with the session
// id and project of its first record and the model of its last answer
// (input.Peek: no import). Only regular files count; a missing folder is
// no error, and with no home and no override there is nowhere to look.
func Find(env input.Env) ([]input.Found, error) {
	if env.Home == "" && env.Get("QWEN_RUNTIME_DIR") == "" && env.Get("QWEN_HOME") == "" {
		return nil, nil
	}
	files, err := filepath.Glob(filepath.Join(Dir(env), "projects", "*", "chats", "*.jsonl"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []input.Found
	for _, file := range files {
		if st, err := os.Lstat(file); err != nil || !st.Mode().IsRegular() {
			continue
		}
		head, tail, fi, err := input.Peek(file, peekBytes)
		if err != nil {
			continue
		}
		id := input.FirstString(head, "sessionId", nil)
		if id == "" {
			id = strings.TrimSuffix(filepath.Base(file), ".jsonl")
		}
		out = append(out, input.Found{File: file, SessionID: id, Project: input.FirstString(head, "cwd", nil),
			Model: input.LastString(tail, "model", nil), Updated: fi.ModTime(), Bytes: fi.Size()})
	}
	return out, nil
}
