package openai

import (
	"encoding/json"
	"slices"
	"strings"
)

// chatRecall scripts MarkerRecall on Chat Completions (Qwen Code 0.24.4
// offers ctxfold's tools as functions mcp__ctxfold__search_history and
// mcp__ctxfold__read_turns when setup marks the server alwaysLoadTools):
// search_history for the query, then read_turns on the first hit its
// result says is covered by a summary, then a text reply. ok is false
// when the request is no step of a recall (the ordinary script answers).
func (s *Server) chatRecall(body []byte, lastUser string, tools []string) (Reply, bool) {
	query, ok := recallQuery(lastUser)
	if !ok {
		return Reply{}, false
	}
	r := Reply{Input: Usage(body)}
	var req struct {
		Messages []struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tool_calls"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	var calls []turnCall
	outputs := map[string]json.RawMessage{}
	for _, m := range req.Messages {
		switch m.Role {
		case "user":
			calls, outputs = nil, map[string]json.RawMessage{}
		case "assistant":
			for _, c := range m.ToolCalls {
				calls = append(calls, turnCall{ID: c.ID, Name: c.Function.Name})
			}
		case "tool":
			outputs[m.ToolCallID] = m.Content
		}
	}
	search := "mcp__" + RecallServer + "__" + toolSearchHistory
	if len(calls) == 0 {
		if !slices.Contains(tools, search) {
			r.Text = "Recall is not offered: no " + search + " tool."
			return r, true
		}
		args, _ := json.Marshal(map[string]any{"query": query})
		r.Calls = []Call{{ID: s.nextCallID(), Name: search, Arguments: string(args)}}
		return r, true
	}
	switch last := calls[len(calls)-1]; {
	case isTool(last, toolSearchHistory):
		id := firstCoveredHit(outputs[last.ID])
		if id == "" {
			r.Text = "Recall found no covered turn."
			return r, true
		}
		args, _ := json.Marshal(map[string]any{"ids": []string{id}})
		r.Calls = []Call{{ID: s.nextCallID(), Name: "mcp__" + RecallServer + "__" + toolReadTurns, Arguments: string(args)}}
	case isTool(last, toolReadTurns):
		r.Text = "Recalled the covered turn."
	default:
		return Reply{}, false
	}
	return r, true
}

// qwenHookContext opens the text part Qwen Code appends to a prompt for a
// UserPromptSubmit hook's additionalContext.
const qwenHookContext = "<qwen:user-prompt-submit-context>"

// userText is a user message's text without the parts a hook added
// (Qwen Code's <qwen:user-prompt-submit-context>): markers quoted there,
// as ctxfold quotes the folded requests, are not the user's.
func userText(raw json.RawMessage) string {
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return contentText(raw)
	}
	var b strings.Builder
	for _, p := range parts {
		if !strings.HasPrefix(p.Text, qwenHookContext) {
			b.WriteString(p.Text)
			b.WriteString("\n")
		}
	}
	return b.String()
}
