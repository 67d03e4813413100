package codex

// This file holds the model request in progress: its assistant node, the placement of its tool outputs and later inputs, its events and its usage.

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// output returns the assistant node of the request in progress, starting a
// new request (and flushing the previous one) when the last run ended.
func (st *state) output(kind string) *transcript.Node {
	if st.g != nil && st.g.open {
		st.sink.Count(kind, transcript.OutcomeMerged, "same model request as the item before it")
		return st.g.assistant
	}
	if err := st.flush(); err != nil {
		// flush only fails on the sink; keep the error for the caller.
		st.deferErr = err
	}
	n := &transcript.Node{ID: st.id(), Role: transcript.RoleAssistant, Content: transcript.Content{IsBlocks: true}}
	st.g = &group{assistant: n, open: true, calls: map[string]string{}, answer: map[string]bool{}}
	if st.pending != nil {
		n.Usage, st.pending = st.pending, nil
	}
	st.sink.Count(kind, transcript.OutcomeImported, "")
	return n
}

// closeRun ends the output run of the current request: a token count
// arriving now belongs to the next request.
func (st *state) closeRun() error {
	if st.g != nil {
		st.g.open = false
	}
	return st.deferErr
}

// input places a user, system or tool node: tool outputs directly after
// their call, other inputs after the outputs of the request in progress.
func (st *state) input(n transcript.Node, isResult bool) error {
	if err := st.closeRun(); err != nil {
		return err
	}
	g := st.g
	if g == nil {
		return st.emit(n)
	}
	if isResult {
		g.results = append(g.results, n)
		if len(g.after) > 0 {
			g.reordered = len(g.after)
		}
		return nil
	}
	g.after = append(g.after, n)
	return nil
}

// flush emits the request in progress: the assistant node (flagging calls
// that never got an output), its tool outputs, then the inputs after it.
func (st *state) flush() error {
	g := st.g
	if g == nil {
		return nil
	}
	st.g = nil
	a := g.assistant
	if len(a.Content.Blocks) == 1 && a.Content.Blocks[0].Type == transcript.BlockText {
		a.Content = transcript.TextContent(a.Content.Blocks[0].Text)
	}
	var unanswered []string
	for _, c := range a.ToolCalls {
		if !g.answer[c.ID] {
			unanswered = append(unanswered, c.ID)
		}
	}
	if len(unanswered) > 0 {
		a.SetMeta("unanswered_tool_calls", unanswered)
		st.sink.Warn(st.file, 0, fmt.Sprintf("node %q: %d tool call(s) without an output (%s): imported and flagged in metadata.unanswered_tool_calls", a.ID, len(unanswered), strings.Join(unanswered, ", ")))
	}
	if err := st.emit(*a); err != nil {
		return err
	}
	for _, n := range g.results {
		if err := st.emit(n); err != nil {
			return err
		}
	}
	for i, n := range g.after {
		if i < g.reordered {
			n.SetMeta("import_reordered", "placed after the tool outputs of the request before it")
		}
		if err := st.emit(n); err != nil {
			return err
		}
	}
	if g.reordered > 0 {
		st.reordered += g.reordered
		if len(st.reorderedAt) < 5 {
			st.reorderedAt = append(st.reorderedAt, a.ID)
		}
	}
	return nil
}

func (st *state) emit(n transcript.Node) error {
	n.Predecessor = st.prev
	n.Caller = st.caller
	if st.prev == "" && st.meta != nil {
		n.SetMeta("codex_session_meta", st.meta)
	}
	if err := st.sink.Node(n); err != nil {
		return err
	}
	st.prev = n.ID
	st.real = append(st.real, n.ID)
	ord, ok := st.ordinals[n.ID]
	if !ok {
		ord = -1
	}
	st.emitted = append(st.emitted, emitted{id: n.ID, ordinal: ord})
	return nil
}

func (st *state) event(rec record) error {
	var ev event
	if !fastEvent(rec.Payload, &ev) {
		if err := input.Unmarshal(rec.Payload, &ev); err != nil {
			return st.lines.Errorf("event_msg payload: %s", input.JSONErrorText(err))
		}
	}
	kind := "event_msg/" + ev.Type
	switch ev.Type {
	case "token_count":
		if ev.Info == nil || ev.Info.Last == nil {
			st.sink.Count(kind, transcript.OutcomeSkipped, "no usage info (rate limits only)")
			return nil
		}
		if ev.Info.Window > 0 {
			st.window = ev.Info.Window
			if g := st.g; g != nil && g.assistant.Usage != nil {
				g.assistant.Usage.Extra[transcript.UsageContextWindow] = input.Raw(st.window)
			}
		}
		if st.byRecord {
			st.sink.Count(kind, transcript.OutcomeSkipped, "mirror of token_usage_record (its model_context_window is kept on the usage)")
			return nil
		}
		total := string(ev.Info.Total)
		if total != "" && total == st.total {
			st.sink.Count(kind, transcript.OutcomeSkipped, "repeats the previous count")
			return nil
		}
		st.total = total
		u := st.usage(*ev.Info.Last)
		if g := st.g; g != nil && g.open && g.assistant.Usage == nil {
			g.assistant.Usage = u
		} else {
			if st.pending != nil {
				st.sink.Count(kind, transcript.OutcomeSkipped, "no assistant output for this request")
			}
			st.pending = u
		}
		st.sink.Count(kind, transcript.OutcomeMerged, "usage of the assistant node of its request")
	case "user_message", "agent_message", "agent_reasoning", "agent_reasoning_raw_content":
		st.sink.Count(kind, transcript.OutcomeSkipped, "mirror of a response_item (not imported twice)")
	case "context_compacted":
		st.sink.Count(kind, transcript.OutcomeSkipped, "mirror of the compacted record")
	case "thread_settings_applied":
		st.sink.Count(kind, transcript.OutcomeSkipped, "settings event; not sent to the model")
	default:
		st.sink.Count(kind, transcript.OutcomeSkipped, "client event, not part of the conversation")
	}
	return nil
}

// usage maps Codex's counts: input_tokens includes the cached part (the
// OpenAI convention), which the extra field says explicitly. The window
// Codex measured against is kept beside them (transcript.UsageContextWindow).
func (st *state) usage(t tokenUsage) *transcript.Usage {
	u := &transcript.Usage{InputTokens: t.Input, OutputTokens: t.Output, CachedInputTokens: t.Cached,
		Extra: map[string]json.RawMessage{
			"reasoning_output_tokens": input.Raw(t.Reasoning),
			"total_tokens":            input.Raw(t.Total),
			"input_includes_cached":   json.RawMessage("true"),
		}}
	if st.window > 0 {
		u.Extra[transcript.UsageContextWindow] = input.Raw(st.window)
	}
	return u
}

// usageRecord gives the request whose output items were just recorded its
// usage: Codex 0.1xx writes token_usage_record right after them, before
// the tool outputs, where the token_count event comes later.
func (st *state) usageRecord(rec record) error {
	var r struct {
		Usage *tokenUsage `json:"usage"`
	}
	if err := input.Unmarshal(rec.Payload, &r); err != nil {
		return st.lines.Errorf("token_usage_record payload: %s", input.JSONErrorText(err))
	}
	if r.Usage == nil {
		st.sink.Count("token_usage_record", transcript.OutcomeSkipped, "no usage")
		return nil
	}
	st.byRecord = true
	g := st.g
	if g == nil || g.assistant.Usage != nil {
		st.sink.Count("token_usage_record", transcript.OutcomeSkipped, "no assistant output for this request")
		return nil
	}
	g.assistant.Usage = st.usage(*r.Usage)
	// The record ends its request's output: an output item after it is
	// the next request's, even with no input between (the compaction
	// request Codex sends right after an answer, compact.go).
	g.open = false
	st.sink.Count("token_usage_record", transcript.OutcomeMerged, "usage of the assistant node of its request")
	return nil
}
