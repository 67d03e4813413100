package gemini

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
)

// peekBytes is how much of a chat file's start and end Find reads.
const peekBytes = 64 << 10

// Find lists Gemini CLI's sessions: ~/.gemini/tmp/<project>/chats/
// session-*.jsonl (and the older session-*.json). The project's directory
// is what ~/.gemini/projects.json maps to the folder (0.61), else the
// folder's .project_root.
func Find(env input.Env) ([]input.Found, error) {
	if env.Home == "" {
		return nil, nil
	}
	base := filepath.Join(env.Home, ".gemini")
	projects := projectDirs(base)
	folders, err := filepath.Glob(filepath.Join(base, "tmp", "*", "chats"))
	if err != nil {
		return nil, err
	}
	var out []input.Found
	for _, chats := range folders {
		folder := filepath.Base(filepath.Dir(chats))
		project := projects[folder]
		if project == "" {
			if b, err := os.ReadFile(filepath.Join(filepath.Dir(chats), ".project_root")); err == nil {
				project = strings.TrimSpace(string(b))
			}
		}
		files, _ := filepath.Glob(filepath.Join(chats, "session-*.json*"))
		for _, path := range files {
			if !strings.HasSuffix(path, ".json") && !strings.HasSuffix(path, ".jsonl") {
				continue
			}
			head, tail, fi, err := input.Peek(path, peekBytes)
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			out = append(out, input.Found{
				File: path, SessionID: input.FirstString(head, "sessionId", nil), Project: project,
				Model: input.LastString(tail, "model", nil), Updated: fi.ModTime(), Bytes: fi.Size(),
			})
		}
	}
	return out, nil
}

// projectDirs maps each folder under ~/.gemini/tmp to its project's
// directory, from projects.json ({"projects": {dir: folder}}).
func projectDirs(base string) map[string]string {
	out := map[string]string{}
	b, err := os.ReadFile(filepath.Join(base, "projects.json"))
	if err != nil {
		return out
	}
	var reg struct {
		Projects map[string]string `json:"projects"`
	}
	if json.Unmarshal(b, &reg) == nil {
		for dir, folder := range reg.Projects {
			out[folder] = dir
		}
	}
	return out
}
