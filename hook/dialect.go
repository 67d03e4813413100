package hook

import (
	"encoding/json"
	"strings"
)

// Dialect is how one client talks to its hooks: the JSON it sends on
// stdin and the JSON by which a hook adds text to what the model reads
// next. A new client is one row of dialects (docs/HOOKS.md).
type Dialect struct {
	// Name is the client as `ctxfold hook --client` names it; matched
	// without regard to case, spaces, dashes and underscores.
	Name string
	// Events maps the client's event names onto ctxfold's (EventPreCompact,
	// …), before the spellings every client shares (normalEvent).
	Events map[string]string
	// Decode reads the client's hook JSON into an Input (nil: Claude
	// Code's field names, which Codex, Gemini CLI and several others
	// share). It sets ClientEvent; Parse normalises Event from it.
	Decode func(b []byte) (Input, error)
	// Output is the hook's stdout that hands text to the model in reply
	// to in (nil: Claude Code's hookSpecificOutput.additionalContext).
	Output func(in Input, text string) ([]byte, error)
	// Transcript finds the transcript of an input that names none (nil:
	// transcript_path is required); getenv reads the hook's environment.
	Transcript func(in Input, getenv func(string) string) string

	// Unannounced is set for a client that compacts without running a
	// hook (Factory Droid 0.215's automatic compaction): on
	// UserPromptSubmit and PostToolUse the hook reads the lines the
	// transcript gained since it last looked for a compaction record
	// (probeUnannounced), and injects as after a PreCompact when it finds
	// one; the injection reaches the model through the event's
	// additionalContext.
	Unannounced bool

	// Ledger: the client lets a hook add text to its summariser's request
	// before it folds (OpenCode's and Kilo's experimental.session.compacting,
	// pi's session_before_compact): on PreCompact the hook prints the fact
	// ledger of the turns about to be folded (ledger.go) as its output.
	Ledger bool
	// Format is the importer's name of the client's sessions when they
	// live in a store of several (OpenCode's and Kilo's database): a hook
	// input naming only session_id is located through importer.Find.
	Format string
}

// dialects are the clients whose hooks ctxfold speaks; the first is the
// default for a --client no row names.
var dialects = []Dialect{
	{Name: "Claude Code"},
	{Name: "Codex"},
	{Name: "Gemini"},
	// Qwen Code 0.24.4 sends Claude Code's fields and event names and
	// reads hookSpecificOutput.additionalContext alike (docs/HOOKS.md,
	// "Qwen Code"): the row only names it.
	{Name: "Qwen Code"},
	{Name: "Copilot", Events: copilotEvents, Decode: copilotDecode, Output: copilotOutput, Transcript: copilotTranscript},
	{Name: "Droid", Unannounced: true},
	{Name: "OpenCode", Events: openCodeEvents, Ledger: true, Format: "opencode"},
	{Name: "Kilo", Events: openCodeEvents, Ledger: true, Format: "kilo"},
	{Name: "pi", Events: piEvents, Ledger: true},
}

// openCodeEvents are the plugin hooks and bus events of OpenCode 1.18 and
// Kilo 7.7 that ctxfold's plugin runs the hook on (setup/opencode.go):
// experimental.session.compacting before the summariser's request is
// built, session.compacted once the summary is written, chat.message on
// each prompt, whose parts the plugin may add to; with Kilo, which
// compacts after the prompt's chat.message ran, also
// experimental.chat.messages.transform on the first request after the
// compaction.
var openCodeEvents = map[string]string{
	"experimental.session.compacting":      EventPreCompact,
	"session.compacted":                    EventPostCompact,
	"chat.message":                         EventUserPromptSubmit,
	"experimental.chat.messages.transform": EventUserPromptSubmit,
}

// piEvents are pi 0.73's extension events ctxfold's extension runs the
// hook on (setup/pi.go).
var piEvents = map[string]string{
	"session_before_compact": EventPreCompact,
	"session_compact":        EventPostCompact,
	"before_agent_start":     EventUserPromptSubmit,
}

// DialectOf is the dialect of the client --client names (the default,
// Claude Code's, for a name no row knows: the hook never breaks a client
// over its name).
func DialectOf(client string) Dialect {
	key := dialectKey(client)
	for _, d := range dialects {
		if dialectKey(d.Name) == key {
			return d
		}
	}
	return dialects[0]
}

func dialectKey(s string) string {
	return strings.ToLower(strings.NewReplacer(" ", "", "-", "", "_", "").Replace(s))
}

// decode reads b as the dialect's JSON.
func (d Dialect) decode(b []byte) (Input, error) {
	if d.Decode != nil {
		return d.Decode(b)
	}
	var in Input
	if err := json.Unmarshal(b, &in); err != nil {
		return in, err
	}
	in.ClientEvent = in.Event
	return in, nil
}

// event is ctxfold's name of the client's event e.
func (d Dialect) event(e string) string {
	if n, ok := d.Events[e]; ok {
		return n
	}
	return normalEvent(e)
}

// output is the hook's stdout handing text to the model.
func (d Dialect) output(in Input, text string) ([]byte, error) {
	if d.Output != nil {
		return d.Output(in, text)
	}
	return json.Marshal(map[string]any{"hookSpecificOutput": map[string]string{
		"hookEventName": in.clientEvent(), "additionalContext": text}})
}
