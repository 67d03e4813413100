package openai

import (
	"encoding/json"
	"strings"
)

// chatRecallStep scripts MarkerRecall on Chat Completions, where a
// client offers an MCP server's tools as plain functions named after the
// server (GitHub Copilot CLI 1.0.102: "ctxfold-search_history",
// "ctxfold-read_turns"): search_history for the query, then read_turns on
// the first hit its result says is covered, then a reply. ok is false
// when the request is no step of a recall.
func (s *Server) chatRecallStep(body []byte, lastUser string) (Reply, bool) {
	r, ok := s.chatRecall(body, lastUser)
	r.Input = Usage(body)
	return r, ok
}

func (s *Server) chatRecall(body []byte, lastUser string) (Reply, bool) {
	query, ok := recallQuery(lastUser)
	if !ok {
		return Reply{}, false
	}
	var req struct {
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []tool `json:"tools"`
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
	if len(calls) == 0 {
		for _, name := range toolNames(req.Tools) {
			if chatTool(name, toolSearchHistory) {
				args, _ := json.Marshal(map[string]any{"query": query})
				return Reply{Calls: []Call{{ID: s.nextCallID(), Name: name, Arguments: string(args)}}}, true
			}
		}
		return Reply{Text: "Recall is not offered: no " + RecallServer + " search_history tool."}, true
	}
	last := calls[len(calls)-1]
	switch {
	case chatTool(last.Name, toolSearchHistory):
		id := firstCoveredHit(outputs[last.ID])
		if id == "" {
			return Reply{Text: "Recall found no covered turn."}, true
		}
		args, _ := json.Marshal(map[string]any{"ids": []string{id}})
		name := strings.TrimSuffix(last.Name, toolSearchHistory) + toolReadTurns
		return Reply{Calls: []Call{{ID: s.nextCallID(), Name: name, Arguments: string(args)}}}, true
	case chatTool(last.Name, toolReadTurns):
		return Reply{Text: "Recalled the covered turn."}, true
	}
	return Reply{}, false
}

// chatTool tells whether a function name is ctxfold's MCP tool as a
// client names it: the server's name, a separator, the tool.
func chatTool(name, tool string) bool {
	prefix, ok := strings.CutSuffix(name, tool)
	return ok && strings.Contains(prefix, RecallServer) && prefix != ""
}

// withoutReminder is a Copilot CLI user message without the
// <system_reminder> block the client appends to it (where a hook's
// additionalContext goes): markers quoted there are the hook's, not the
// user's.
func withoutReminder(text string) string {
	if i := strings.Index(text, "\n\n<system_reminder>\n"); i >= 0 {
		return text[:i]
	}
	return text
}

// qwenHookContext opens the text part Qwen Code appends to a prompt for a
// UserPromptSubmit hook's additionalContext.
const qwenHookContext = "<qwen:user-prompt-submit-context>"

// userText is a user message's text without the parts a hook added
// (Qwen Code's <qwen:user-prompt-submit-context>; ctxfold's injected
// context as OpenCode's plugin adds it, a part of the prompt): markers
// quoted there, as ctxfold quotes the folded requests, are not the user's.
func userText(raw json.RawMessage) string {
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return contentText(raw)
	}
	var b strings.Builder
	for _, p := range parts {
		if !strings.HasPrefix(p.Text, qwenHookContext) && !reInjection.MatchString(p.Text) {
			b.WriteString(p.Text)
			b.WriteString("\n")
		}
	}
	return b.String()
}
