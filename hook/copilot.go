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

// copilotEvents are Copilot's camelCase names of ctxfold's events.
var copilotEvents = map[string]string{"preCompact": EventPreCompact, "userPromptSubmitted": EventUserPromptSubmit}

// copilotDecode reads both spellings. Under its own camelCase event
// names (preCompact, userPromptSubmitted) Copilot sends camelCase fields
// and no event name (recorded): preCompact's input is the one with a
// trigger and a transcriptPath, userPromptSubmitted's the one with a
// prompt (userPromptTransformed adds transformedPrompt: not that one).
func copilotDecode(b []byte) (Input, error) {
	var in Input
	if err := json.Unmarshal(b, &in); err != nil {
		return in, err
	}
	var camel struct {
		SessionID         string  `json:"sessionId"`
		TranscriptPath    string  `json:"transcriptPath"`
		Trigger           string  `json:"trigger"`
		Prompt            *string `json:"prompt"`
		TransformedPrompt *string `json:"transformedPrompt"`
	}
	_ = json.Unmarshal(b, &camel)
	in.ClientEvent = in.Event
	if in.Event != "" {
		return in, nil
	}
	in.SessionID, in.TranscriptPath = camel.SessionID, camel.TranscriptPath
	switch {
	case camel.Trigger != "" && camel.TranscriptPath != "":
		in.ClientEvent = "preCompact"
	case camel.Prompt != nil && camel.TransformedPrompt == nil:
		in.ClientEvent, in.Prompt = "userPromptSubmitted", *camel.Prompt
	}
	return in, nil
}

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
