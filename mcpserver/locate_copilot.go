package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
)

// copilotSession is GitHub Copilot CLI's session: Copilot 1.0.102 starts
// its MCP servers with its own environment, COPILOT_AGENT_SESSION_ID
// naming the session (recorded: docs/HOOKS.md), whose log is
// $COPILOT_HOME/session-state/<id>/events.jsonl (setup names COPILOT_HOME
// in the server's environment; else ~/.copilot). Without the id, the most
// recently written log there.
func (l Locate) copilotSession(getenv func(string) string) (string, error) {
	home := getenv("COPILOT_HOME")
	if !filepath.IsAbs(home) {
		if l.Home == "" {
			return "", errNoTranscript
		}
		home = filepath.Join(l.Home, ".copilot")
	}
	state := filepath.Join(home, "session-state")
	if id := getenv("COPILOT_AGENT_SESSION_ID"); id != "" && id != "." && id != ".." && !strings.ContainsAny(id, `/\`) {
		p := filepath.Join(state, id, "events.jsonl")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	entries, err := os.ReadDir(state)
	if err != nil {
		return "", errNoTranscript
	}
	best, bestTime := "", int64(0)
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(state, e.Name(), "events.jsonl")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.ModTime().UnixNano() > bestTime {
			best, bestTime = p, fi.ModTime().UnixNano()
		}
	}
	if best == "" {
		return "", errNoTranscript
	}
	return best, nil
}
