package copilot

// This file turns the events that carry the conversation into nodes, and
// counts every other event with what happened to it.

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// event is the envelope of every line.
type event struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Timestamp string          `json:"timestamp"`
	ParentID  *string         `json:"parentId"`
	AgentID   string          `json:"agentId"`
	Ephemeral bool            `json:"ephemeral"`
	Data      json.RawMessage `json:"data"`
}

// chain is one conversation of the log: the session's, or a sub-agent's
// (its events carry agentId; its nodes carry the node whose task call
// started it as caller).
type chain struct {
	agent, caller string
	// sys is the chain's last system prompt (lastSystems); sysID its root
	// system node once written.
	sys, sysID string
	sysSeen    bool
	// last is the chain's newest node; order the ids of its nodes after
	// the system node, users their user texts as the client lists them in
	// a compaction's replacement message; open the calls awaiting results.
	last  string
	order []string
	users map[string]string
	open  map[string]bool
}

type state struct {
	file string
	sink transcript.ImportSink
	// *chain is the chain of the event at hand.
	*chain
	main   *chain
	agents map[string]*chain
	// systems are the last system prompt of each chain, by agent id ("" the
	// session's): lastSystems' first pass.
	systems map[string]string
	// callNode is the assistant node making each tool call (a task call's
	// node is its sub-agent's caller).
	callNode map[string]string
	// covers holds, per compaction attempt, the chain when it started:
	// what the client summarises (what it adds meanwhile is kept).
	covers map[string][]string
	// usage is each usage record waiting for the assistant message of the
	// same API call.
	usage map[string]*transcript.Usage
	seen  map[string]bool
	model string
}

func newChain(agent, caller, sys string) *chain {
	return &chain{agent: agent, caller: caller, sys: sys, users: map[string]string{}, open: map[string]bool{}}
}

func newState(file string, systems map[string]string) *state {
	main := newChain("", "", systems[""])
	return &state{file: file, chain: main, main: main, agents: map[string]*chain{}, systems: systems, callNode: map[string]string{},
		covers: map[string][]string{}, usage: map[string]*transcript.Usage{}, seen: map[string]bool{}}
}

// chainOf is the chain an event belongs to, a sub-agent's made on its
// first event (its caller unknown unless subagent.started named it).
func (st *state) chainOf(line int, ev *event) *chain {
	if ev.AgentID == "" {
		return st.main
	}
	c := st.agents[ev.AgentID]
	if c == nil {
		var d struct {
			ToolCallID string `json:"toolCallId"`
		}
		if ev.Type == "subagent.started" {
			json.Unmarshal(ev.Data, &d)
		}
		c = newChain(ev.AgentID, st.callNode[d.ToolCallID], st.systems[ev.AgentID])
		if c.caller == "" {
			st.warn(line, fmt.Sprintf("sub-agent %s: no task call in the log started it; imported as a root of its own", ev.AgentID))
		}
		st.agents[ev.AgentID] = c
	}
	return c
}

func (st *state) warn(line int, msg string) { st.sink.Warn(st.file, line, msg) }

// skipped are the events that never reach the model, by type or by the
// namespace before the dot, with the reason the report gives.
var skipped = map[string]string{
	"assistant":                "the client's turn bookkeeping (turn start and end, streaming, intent); not sent to the model",
	"session":                  "session lifecycle, settings and display event; not sent to the model",
	"model":                    "the client's trace of a model call of its own (a compaction's summarizer); the summary is imported from session.compaction_complete",
	"hook":                     "a hook run; not sent to the model",
	"permission":               "a permission prompt; not sent to the model",
	"tool":                     "tool progress; the call is on its assistant message, the result is tool.execution_complete",
	"subagent":                 "sub-agent lifecycle; its conversation is imported from its own events (agentId)",
	"tool.execution_start":     "the call is on its assistant message",
	"model.call_start":         "the streamed output's timing of a model call (copilot -p --output-format json); its reply is the assistant.message that follows",
	"model.call_finished":      "the streamed output's timing of a model call (copilot -p --output-format json); its reply is the assistant.message that follows",
	"session.compaction_start": "marks what the compaction that follows replaces",
}

func (st *state) event(line int, ev *event) error {
	st.chain = st.chainOf(line, ev)
	switch ev.Type {
	case "user.message", "assistant.message", "tool.execution_complete", "session.compaction_complete":
		// The events that become nodes, named by their id.
		if st.seen[ev.ID] {
			return input.Errorf(st.file, line, "event id %q repeats an earlier event", ev.ID)
		}
		st.seen[ev.ID] = true
	}
	if st.agent != "" && strings.HasPrefix(ev.Type, "session.") && ev.Type != "session.usage_record" {
		st.sink.Count(ev.Type, transcript.OutcomeSkipped, "a sub-agent's session event (its model, its own compaction: not modelled)")
		return nil
	}
	switch ev.Type {
	case "session.start", "session.resume":
		return st.start(line, ev)
	case "session.model_change":
		var d struct {
			NewModel string `json:"newModel"`
		}
		if err := st.data(line, ev, &d); err != nil {
			return err
		}
		st.model = d.NewModel
		st.sink.Count(ev.Type, transcript.OutcomeMerged, "the model of the assistant messages after it")
	case "system.message":
		return st.system(line, ev)
	case "user.message":
		return st.user(line, ev)
	case "assistant.message":
		return st.assistant(line, ev)
	case "tool.execution_complete":
		return st.toolResult(line, ev)
	case "session.usage_record":
		return st.usageRecord(line, ev)
	case "session.compaction_start":
		return st.compactionStart(line, ev)
	case "session.compaction_complete":
		return st.compactionComplete(line, ev)
	case "session.snapshot_rewind":
		return st.rewind(line, ev)
	case "session.truncation", "session.context_cleared":
		st.warn(line, ev.Type+": the client dropped part of its history here; ctxfold keeps the whole history (not modelled yet)")
		st.sink.Count(ev.Type, transcript.OutcomeSkipped, "history the client dropped is kept (not modelled yet)")
	default:
		reason, ok := skipped[ev.Type]
		if !ok {
			prefix, _, _ := strings.Cut(ev.Type, ".")
			if reason, ok = skipped[prefix]; !ok {
				reason = "an event the model does not read"
			}
		}
		st.sink.Count(ev.Type, transcript.OutcomeSkipped, reason)
	}
	return nil
}

// data decodes an event's data; a failure names the line and the event.
func (st *state) data(line int, ev *event, v any) error {
	if err := input.Unmarshal(ev.Data, v); err != nil {
		return input.Errorf(st.file, line, "%s %s: expected its data object: %s", ev.Type, ev.ID, input.JSONErrorText(err))
	}
	return nil
}

func (st *state) start(line int, ev *event) error {
	var d struct {
		SelectedModel string `json:"selectedModel"`
	}
	if err := st.data(line, ev, &d); err != nil {
		return err
	}
	if d.SelectedModel != "" {
		st.model = d.SelectedModel
		st.sink.SetModel(d.SelectedModel)
	}
	st.sink.Count(ev.Type, transcript.OutcomeMerged, "the session's id and model")
	return nil
}

// system writes the root system node at the first system prompt, holding
// the file's last one (what the client sends next); the versions before it
// are counted as merged into it.
func (st *state) system(line int, ev *event) error {
	var d struct {
		Content string `json:"content"`
	}
	if err := st.data(line, ev, &d); err != nil {
		return err
	}
	if st.sysSeen {
		st.sink.Count(ev.Type, transcript.OutcomeMerged, "the system prompt the client rewrote for a turn; the root system node holds its last version, which its next request sends")
		return nil
	}
	st.sysSeen = true
	st.sink.Count(ev.Type, transcript.OutcomeImported, "")
	return nil
}

// ensureSystem writes the root system node before the first message.
func (st *state) ensureSystem(ts string) error {
	if st.sysID != "" || st.sys == "" || st.last != "" {
		return nil
	}
	st.sysID = "system"
	if st.agent != "" {
		st.sysID = "system-" + st.agent
	}
	n := transcript.Node{ID: st.sysID, Role: transcript.RoleSystem, Content: transcript.TextContent(st.sys), CreatedAt: ts, Caller: st.caller}
	if err := st.sink.Node(n); err != nil {
		return err
	}
	st.last = st.sysID
	return nil
}

func (st *state) add(n transcript.Node) error {
	n.Predecessor, n.Caller = st.last, st.caller
	if err := st.sink.Node(n); err != nil {
		return err
	}
	st.last = n.ID
	st.order = append(st.order, n.ID)
	return nil
}

func (st *state) user(line int, ev *event) error {
	var d struct {
		Content            string          `json:"content"`
		TransformedContent *string         `json:"transformedContent"`
		Attachments        json.RawMessage `json:"attachments"`
		Source             string          `json:"source"`
	}
	if err := st.data(line, ev, &d); err != nil {
		return err
	}
	if err := st.ensureSystem(ev.Timestamp); err != nil {
		return err
	}
	text := d.Content
	if d.TransformedContent != nil {
		text = *d.TransformedContent // what the model read
	}
	n := transcript.Node{ID: ev.ID, Role: transcript.RoleUser, Content: transcript.TextContent(text), CreatedAt: ev.Timestamp}
	if len(d.Attachments) > 0 && string(d.Attachments) != "[]" && string(d.Attachments) != "null" {
		n.SetMeta("copilot_attachments", d.Attachments)
	}
	if d.Source != "" {
		n.SetMeta("copilot_source", d.Source)
	}
	if len(st.open) > 0 {
		st.warn(line, fmt.Sprintf("a user message while %d tool call(s) still await their results", len(st.open)))
		st.open = map[string]bool{}
	}
	if err := st.add(n); err != nil {
		return err
	}
	st.users[ev.ID] = d.Content
	st.sink.Count(ev.Type, transcript.OutcomeImported, "")
	return nil
}

type toolRequest struct {
	ToolCallID string          `json:"toolCallId"`
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
	Type       string          `json:"type"`
}

func (st *state) assistant(line int, ev *event) error {
	var d struct {
		Content         string        `json:"content"`
		ToolRequests    []toolRequest `json:"toolRequests"`
		ReasoningText   string        `json:"reasoningText"`
		ReasoningOpaque string        `json:"reasoningOpaque"`
		Model           string        `json:"model"`
		APICallID       string        `json:"apiCallId"`
	}
	if err := st.data(line, ev, &d); err != nil {
		return err
	}
	if err := st.ensureSystem(ev.Timestamp); err != nil {
		return err
	}
	n := transcript.Node{ID: ev.ID, Role: transcript.RoleAssistant, CreatedAt: ev.Timestamp}
	if d.ReasoningText != "" || d.ReasoningOpaque != "" {
		blocks := []transcript.Block{{Type: "thinking", Text: d.ReasoningText, Signature: d.ReasoningOpaque}}
		if d.Content != "" {
			blocks = append(blocks, transcript.Block{Type: "text", Text: d.Content})
		}
		n.Content = transcript.Content{Blocks: blocks, IsBlocks: true}
	} else {
		n.Content = transcript.TextContent(d.Content)
	}
	for i, tr := range d.ToolRequests {
		if tr.ToolCallID == "" || tr.Name == "" {
			return input.Errorf(st.file, line, "assistant.message %s: toolRequests[%d] needs a toolCallId and a name", ev.ID, i)
		}
		args := tr.Arguments
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		tc := transcript.ToolCall{ID: tr.ToolCallID, Name: tr.Name, Arguments: args}
		if tr.Type == "custom" {
			tc.Extra = map[string]json.RawMessage{"custom": json.RawMessage("true")}
		}
		n.ToolCalls = append(n.ToolCalls, tc)
	}
	if u := st.usage[d.APICallID]; d.APICallID != "" && u != nil {
		n.Usage = u
		delete(st.usage, d.APICallID)
		st.sink.Count("session.usage_record", transcript.OutcomeMerged, "usage of the assistant message its API call produced")
	}
	if d.Model != "" && st.agent == "" {
		st.model = d.Model
	}
	if st.model != "" && st.agent == "" {
		st.sink.SetModel(st.model)
	}
	if err := st.add(n); err != nil {
		return err
	}
	st.open = map[string]bool{}
	for _, tc := range n.ToolCalls {
		st.open[tc.ID] = true
		st.callNode[tc.ID] = n.ID
	}
	st.sink.Count(ev.Type, transcript.OutcomeImported, "")
	return nil
}

func (st *state) toolResult(line int, ev *event) error {
	var d struct {
		ToolCallID string `json:"toolCallId"`
		Success    bool   `json:"success"`
		Result     *struct {
			Content string `json:"content"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
			Code    string `json:"code"`
		} `json:"error"`
	}
	if err := st.data(line, ev, &d); err != nil {
		return err
	}
	if !st.open[d.ToolCallID] {
		st.warn(line, fmt.Sprintf("tool.execution_complete %s answers no open call (%q); left out", ev.ID, d.ToolCallID))
		st.sink.Count(ev.Type, transcript.OutcomeSkipped, "a result answering no open call of the assistant message before it")
		return nil
	}
	delete(st.open, d.ToolCallID)
	n := transcript.Node{ID: ev.ID, Role: transcript.RoleTool, ToolCallID: d.ToolCallID, CreatedAt: ev.Timestamp}
	switch {
	case d.Result != nil:
		n.Content = transcript.TextContent(d.Result.Content)
	case d.Error != nil:
		n.Content = transcript.TextContent(d.Error.Message)
	}
	if !d.Success {
		n.SetMeta("is_error", true)
	}
	if err := st.add(n); err != nil {
		return err
	}
	st.sink.Count(ev.Type, transcript.OutcomeImported, "")
	return nil
}

func (st *state) usageRecord(line int, ev *event) error {
	var d struct {
		Usage struct {
			InputTokens      int64  `json:"inputTokens"`
			OutputTokens     int64  `json:"outputTokens"`
			CacheReadTokens  int64  `json:"cacheReadTokens"`
			CacheWriteTokens int64  `json:"cacheWriteTokens"`
			MaxPromptTokens  int64  `json:"maxPromptTokens"`
			APICallID        string `json:"apiCallId"`
		} `json:"usage"`
	}
	if err := st.data(line, ev, &d); err != nil {
		return err
	}
	u := d.Usage
	if u.APICallID == "" {
		st.sink.Count(ev.Type, transcript.OutcomeSkipped, "a usage record naming no API call (apiCallId)")
		return nil
	}
	// inputTokens is the whole prompt (the provider's prompt_tokens); the
	// cache counts are parts of it.
	usage := &transcript.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CachedInputTokens: u.CacheReadTokens,
		Extra: map[string]json.RawMessage{}}
	if u.CacheWriteTokens > 0 {
		usage.Extra["cache_write_tokens"] = input.Raw(u.CacheWriteTokens)
	}
	if u.MaxPromptTokens > 0 {
		usage.Extra[transcript.UsageContextWindow] = input.Raw(u.MaxPromptTokens)
	}
	if old := st.usage[u.APICallID]; old != nil {
		st.sink.Count(ev.Type, transcript.OutcomeSkipped, "a second usage record for one API call; the first is kept")
		return nil
	}
	st.usage[u.APICallID] = usage
	return nil
}

// finish counts the usage no assistant message took and names HEAD.
func (st *state) finish() error {
	for range st.usage {
		st.sink.Count("session.usage_record", transcript.OutcomeSkipped, "a request whose reply the log does not hold (failed or aborted)")
	}
	for range st.covers {
		countUnfinished(st)
	}
	if st.main.last != "" {
		st.sink.SetHead(st.main.last)
	}
	return nil
}

// rewind follows session.snapshot_rewind (the schema's: upToEventId is
// the first event removed, eventIds all of them when given): the messages
// from the first removed one on stay as a branch, and the conversation
// continues from the node before them, as the client does.
func (st *state) rewind(line int, ev *event) error {
	var d struct {
		UpToEventID string   `json:"upToEventId"`
		EventIDs    []string `json:"eventIds"`
	}
	if err := st.data(line, ev, &d); err != nil {
		return err
	}
	removed := map[string]bool{d.UpToEventID: true}
	for _, id := range d.EventIDs {
		removed[id] = true
	}
	cut := -1
	for i, id := range st.main.order {
		if removed[id] {
			cut = i
			break
		}
	}
	if cut < 0 {
		st.warn(line, "session.snapshot_rewind "+ev.ID+": it removes no message of the conversation")
		st.sink.Count(ev.Type, transcript.OutcomeSkipped, "a rewind that removes no message")
		return nil
	}
	m := st.main
	m.last = m.sysID
	if cut > 0 {
		m.last = m.order[cut-1]
	}
	m.order = m.order[:cut:cut]
	m.open = map[string]bool{}
	st.sink.Count(ev.Type, transcript.OutcomeMerged, "the rewound messages stay as a branch; the conversation continues from the message before them")
	return nil
}
