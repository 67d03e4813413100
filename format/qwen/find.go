package qwen

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
)

// tailBytes is how much of a session's end Find reads for its last model.
const tailBytes = 64 << 10

// Dir is where Qwen Code keeps its runtime files, projects/ included
// (its Storage.getRuntimeBaseDir): $QWEN_RUNTIME_DIR, else the user
// settings' advanced.runtimeOutputDir when it is absolute or under ~ (a
// relative one resolves per project, which a machine-wide listing cannot
// follow), else the global folder: $QWEN_HOME, else ~/.qwen.
func Dir(env input.Env) string {
	if d := env.Get("QWEN_RUNTIME_DIR"); d != "" {
		return expand(env, d)
	}
	global := filepath.Join(env.Home, ".qwen")
	if d := env.Get("QWEN_HOME"); d != "" {
		global = expand(env, d)
	}
	if d := runtimeOutputDir(filepath.Join(global, "settings.json")); d != "" {
		if d = expand(env, d); filepath.IsAbs(d) {
			return d
		}
	}
	return global
}

// expand resolves a leading ~ to the home, as the client does.
func expand(env input.Env, d string) string {
	if d == "~" || strings.HasPrefix(d, "~/") {
		return filepath.Join(env.Home, strings.TrimPrefix(d, "~"))
	}
	return d
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
// projects/<project>/chats/<session id>.jsonl under Dir. Only regular
// files count; a missing folder is no error.
func Find(env input.Env) ([]input.Found, error) {
	files, err := filepath.Glob(filepath.Join(Dir(env), "projects", "*", "chats", "*.jsonl"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []input.Found
	for _, file := range files {
		st, err := os.Lstat(file)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		f := input.Found{File: file, SessionID: strings.TrimSuffix(filepath.Base(file), ".jsonl"), Updated: st.ModTime(), Bytes: st.Size()}
		describe(file, &f)
		out = append(out, f)
	}
	return out, nil
}

// describe fills what the file says cheaply: the session id and project
// of its first record, the model of the last assistant record in its
// last tailBytes.
func describe(file string, f *input.Found) {
	fh, err := os.Open(file)
	if err != nil {
		return
	}
	defer fh.Close()
	if first, err := input.NewLines(fh, file, input.Options{}).Next(); err == nil {
		var r struct{ SessionID, Cwd string }
		if json.Unmarshal(first, &r) == nil {
			if r.SessionID != "" {
				f.SessionID = r.SessionID
			}
			f.Project = r.Cwd
		}
	}
	off := f.Bytes - tailBytes
	if off < 0 {
		off = 0
	}
	tail := make([]byte, f.Bytes-off)
	n, _ := fh.ReadAt(tail, off)
	lines := bytes.Split(tail[:n], []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		var r struct{ Type, Model string }
		if json.Unmarshal(lines[i], &r) == nil && r.Type == "assistant" && r.Model != "" {
			f.Model = r.Model
			return
		}
	}
}
