package hook

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

// GitHub Copilot CLI 1.0.102 (docs/HOOKS.md, "GitHub Copilot CLI"; recorded
// under testdata/hook/copilot): hooks configured under Claude Code's
// PascalCase event names get Claude Code's snake_case fields
// (hook_event_name, session_id, cwd, prompt, trigger), but only PreCompact
// (and Stop) carry transcript_path: the hook finds the session's
// events.jsonl from session_id. Of the output only a top-level
// additionalContext reaches the model (appended to the prompt in a
// <system_reminder>); hookSpecificOutput is ignored.

// copilotOutput is {"additionalContext": text}.
func copilotOutput(_ Input, text string) ([]byte, error) {
	return json.Marshal(map[string]string{"additionalContext": text})
}

// copilotTranscript is $COPILOT_HOME/session-state/<session_id>/events.jsonl
// (COPILOT_HOME, when absolute, else ~/.copilot, as the client resolves
// its folder); "" for a session id that is no plain file name.
func copilotTranscript(in Input, getenv func(string) string) string {
	id := in.SessionID
	if getenv == nil || id == "" || id == "." || id == ".." || strings.ContainsAny(id, "/\\\x00") {
		return ""
	}
	home := getenv("COPILOT_HOME")
	if !filepath.IsAbs(home) {
		h := getenv("HOME")
		if !filepath.IsAbs(h) {
			return ""
		}
		home = filepath.Join(h, ".copilot")
	}
	return filepath.Join(home, "session-state", id, "events.jsonl")
}
