package hook

import (
	"errors"
	"fmt"
	"strings"
)

// Input is the part of a client's hook JSON the hook reads. Claude Code
// 2.1.328 sends session_id, transcript_path, cwd, prompt_id and
// hook_event_name to every hook; PreCompact adds trigger ("manual",
// "auto") and custom_instructions, PostCompact trigger and
// compact_summary, SessionStart source ("startup", "resume", "clear",
// "compact") and model, UserPromptSubmit prompt (recorded under
// testdata/hook/claude-code).
type Input struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	Event          string `json:"hook_event_name"`
	Trigger        string `json:"trigger"`
	Source         string `json:"source"`
	CompactSummary string `json:"compact_summary"`
	Model          string `json:"model"`
	Prompt         string `json:"prompt"`
	// ClientEvent is hook_event_name as the client spelled it (Event is
	// the normalised name): the output names it back.
	ClientEvent string `json:"-"`
}

// Event names, as Claude Code spells them; Codex's are mapped onto them
// (normalEvent).
const (
	EventPreCompact       = "PreCompact"
	EventPostCompact      = "PostCompact"
	EventSessionStart     = "SessionStart"
	EventUserPromptSubmit = "UserPromptSubmit"
	EventPostToolUse      = "PostToolUse"
)

// MaxInput bounds the hook JSON read from stdin.
const MaxInput = 1 << 20

// Parse decodes a hook's JSON as Claude Code writes it (ParseAs with the
// default dialect).
func Parse(b []byte) (Input, error) { return ParseAs(dialects[0], b) }

// ParseAs decodes a hook's JSON in the client's dialect. Unknown fields
// are ignored; a document that is not one JSON object, or names no event,
// is an error.
func ParseAs(d Dialect, b []byte) (Input, error) {
	var in Input
	if len(strings.TrimSpace(string(b))) == 0 {
		return in, errors.New("empty hook input")
	}
	if len(b) > MaxInput {
		return in, fmt.Errorf("hook input over %d bytes", MaxInput)
	}
	in, err := d.decode(b)
	if err != nil {
		return in, fmt.Errorf("hook input: %w", err)
	}
	in.Event = d.event(in.ClientEvent)
	if in.Event == "" {
		return in, errors.New("hook input: no hook_event_name")
	}
	return in, nil
}

// normalEvent maps the spellings clients use onto Claude Code's names
// (snake case or lower case as some clients write them). Gemini CLI 0.61
// names its hook before a compression PreCompress, and its hook on each
// prompt, before the turn starts, BeforeAgent (its additionalContext is
// appended to the prompt): that is UserPromptSubmit's place.
func normalEvent(e string) string {
	switch strings.ToLower(strings.ReplaceAll(strings.ReplaceAll(e, "_", ""), "-", "")) {
	case "precompact", "precompress":
		return EventPreCompact
	case "postcompact":
		return EventPostCompact
	case "sessionstart":
		return EventSessionStart
	case "userpromptsubmit", "beforeagent":
		return EventUserPromptSubmit
	case "posttooluse":
		return EventPostToolUse
	}
	return e
}

// clientEvent is the event as the client named it.
func (in Input) clientEvent() string {
	if in.ClientEvent != "" {
		return in.ClientEvent
	}
	return in.Event
}
