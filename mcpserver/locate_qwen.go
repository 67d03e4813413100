package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
)

// qwenSession is the most recently written session of the server's
// project in Qwen Code's folder: projects/<slug>/chats/<session id>.jsonl
// under $QWEN_RUNTIME_DIR, else $QWEN_HOME, else ~/.qwen, the slug being
// the project directory with every character but an ASCII letter or digit
// made '-' (as Claude Code's; recorded with 0.24.4). Qwen Code starts its
// MCP servers in the project directory and passes no session id.
func (l Locate) qwenSession(getenv func(string) string) (string, error) {
	base := getenv("QWEN_RUNTIME_DIR")
	if base == "" {
		base = getenv("QWEN_HOME")
	}
	if base == "" || !filepath.IsAbs(base) {
		if l.Home == "" {
			return "", errNoTranscript
		}
		base = filepath.Join(l.Home, ".qwen")
	}
	if l.Cwd == "" {
		return "", errNoTranscript
	}
	dirs := []string{l.Cwd}
	if real, err := filepath.EvalSymlinks(l.Cwd); err == nil && real != l.Cwd {
		dirs = append(dirs, real)
	}
	best, bestTime := "", int64(0)
	for _, d := range dirs {
		chats := filepath.Join(base, "projects", slug(d), "chats")
		entries, err := os.ReadDir(chats)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".jsonl") {
				continue
			}
			if fi, err := e.Info(); err == nil && fi.ModTime().UnixNano() > bestTime {
				best, bestTime = filepath.Join(chats, e.Name()), fi.ModTime().UnixNano()
			}
		}
	}
	if best == "" {
		return "", errNoTranscript
	}
	return best, nil
}
