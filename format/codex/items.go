package codex

// This file imports response items: messages, reasoning, tool calls and their outputs.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

func (st *state) item(it item, rec record) error {
	kind := "response_item/" + it.Type
	switch it.Type {
	case "message":
		switch it.Role {
		case "assistant":
			n := st.output(kind + "/assistant")
			n.Content.Blocks = append(n.Content.Blocks, textBlocks(it.Content)...)
			return nil
		case "user", "developer", "system":
			n := transcript.Node{ID: st.id(), Role: transcript.RoleUser, CreatedAt: rec.Timestamp}
			if it.Role != "user" {
				n.Role = transcript.RoleSystem
				n.SetMeta("codex_role", it.Role)
			}
			n.Content = transcript.Content{IsBlocks: true, Blocks: textBlocks(it.Content)}
			st.sink.Count(kind+"/"+it.Role, transcript.OutcomeImported, "")
			return st.input(n, false)
		}
		st.sink.Count(kind+"/"+it.Role, transcript.OutcomeSkipped, "unknown message role")
	case "reasoning":
		n := st.output(kind)
		if b, ok := reasoningBlock(it); ok {
			n.Content.Blocks = append(n.Content.Blocks, b)
		}
	case "function_call", "custom_tool_call", "local_shell_call":
		return st.toolCall(it, kind)
	case "web_search_call":
		n := st.output(kind)
		appendMetaRaw(n, "codex_web_search_calls", recordPayload(it, rec))
	case "function_call_output", "custom_tool_call_output":
		return st.toolOutput(it, rec, kind)
	case "ghost_snapshot":
		st.sink.Count(kind, transcript.OutcomeSkipped, "git snapshot of the workspace, not sent to the model")
	default:
		st.sink.Count(kind, transcript.OutcomeSkipped, "item type not known to this importer")
	}
	return nil
}

// toolCall adds a function, custom tool or local shell call to the
// request's assistant node; a call id repeated within the request is
// not imported.
func (st *state) toolCall(it item, kind string) error {
	n := st.output(kind)
	call := transcript.ToolCall{ID: it.CallID, Name: it.Name, Arguments: it.Arguments}
	if call.ID == "" {
		call.ID = it.ID
	}
	if call.ID == "" {
		call.ID = st.id()
	}
	switch it.Type {
	case "custom_tool_call":
		call.Arguments = input.Raw(input.Text(it.Input))
		call.Extra = map[string]json.RawMessage{transcript.ExtraCustom: json.RawMessage("true")}
		appendMeta(n, "codex_custom_tool_calls", call.ID)
	case "local_shell_call":
		call.Name, call.Arguments = "local_shell", it.Action
	}
	if len(bytes.TrimSpace(call.Arguments)) == 0 {
		call.Arguments = json.RawMessage(`{}`)
	}
	if it.Namespace != "" {
		// A tool of a namespace (multi_agent_v1): the provider needs both.
		if call.Extra == nil {
			call.Extra = map[string]json.RawMessage{}
		}
		call.Extra[transcript.ExtraNamespace] = input.Raw(it.Namespace)
	}
	if _, dup := st.g.calls[call.ID]; dup {
		st.sink.Warn(st.file, st.lines.Line, fmt.Sprintf("call id %q repeats within one request; the repeat is not imported", call.ID))
		st.sink.Count(kind, transcript.OutcomeSkipped, "repeated call id")
		return nil
	}
	n.ToolCalls = append(n.ToolCalls, call)
	st.g.calls[call.ID] = call.Name
	return nil
}

// toolOutput imports a tool's output as the tool node answering its
// call, and remembers the thread a spawn_agent call started.
func (st *state) toolOutput(it item, rec record, kind string) error {
	g := st.g
	name, ok := "", false
	if g != nil {
		name, ok = g.calls[it.CallID]
	}
	if !ok || g.answer[it.CallID] {
		why := "no call with this call_id in the request before it"
		if ok {
			why = "a second output for the same call"
		}
		st.sink.Warn(st.file, st.lines.Line, fmt.Sprintf("output for call %q not imported: %s", it.CallID, why))
		st.sink.Count(kind, transcript.OutcomeSkipped, why)
		return st.closeRun()
	}
	text := outputText(it.Output)
	if name == "spawn_agent" {
		var out struct {
			AgentID string `json:"agent_id"`
		}
		if json.Unmarshal([]byte(text), &out) == nil && out.AgentID != "" {
			if st.spawned == nil {
				st.spawned = map[string]string{}
			}
			st.spawned[out.AgentID] = g.assistant.ID
		}
	}
	n := transcript.Node{ID: st.id(), Role: transcript.RoleTool, ToolCallID: it.CallID, Name: name,
		Content: transcript.TextContent(text), CreatedAt: rec.Timestamp}
	st.sink.Count(kind, transcript.OutcomeImported, "")
	g.answer[it.CallID] = true
	return st.input(n, true)
}

// reasoningBlock is a reasoning item as one thinking block: its summary
// and content texts joined by blank lines, and in Extra what Codex sends
// back of it (docs/FORMAT.md §5): encrypted_content, and the length of
// each summary and content part so the parts can be told apart again.
// An item with neither text nor encrypted content gives no block.
func reasoningBlock(it item) (transcript.Block, bool) {
	var texts []string
	summary := make([]int, 0, len(it.Summary))
	for _, p := range it.Summary {
		texts = append(texts, p.Text)
		summary = append(summary, len(p.Text))
	}
	b := transcript.Block{Type: transcript.BlockThinking, Extra: map[string]json.RawMessage{transcript.ExtraSummaryLengths: input.Raw(summary)}}
	if ps := parts(it.Content); ps != nil {
		content := make([]int, 0, len(ps))
		for _, p := range ps {
			texts = append(texts, p.Text)
			content = append(content, len(p.Text))
		}
		b.Extra[transcript.ExtraContentLengths] = input.Raw(content)
	}
	b.Text = strings.Join(texts, "\n\n")
	if it.EncryptedContent != nil {
		b.Extra[transcript.ExtraEncryptedContent] = input.Raw(*it.EncryptedContent)
	}
	return b, b.Text != "" || it.EncryptedContent != nil
}

func recordPayload(_ item, rec record) json.RawMessage { return rec.Payload }
