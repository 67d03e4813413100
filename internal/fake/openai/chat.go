package openai

import (
	"encoding/json"
	"fmt"
	"net/http"
)

type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCalls  json.RawMessage `json:"tool_calls"`
		ToolCallID string          `json:"tool_call_id"`
	} `json:"messages"`
	Tools         []tool `json:"tools"`
	Stream        bool   `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

func (s *Server) chat(w http.ResponseWriter, body []byte, seq int) {
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "chat completions request: "+err.Error(), http.StatusBadRequest)
		return
	}
	var lastUser string
	var callsAfter bool
	var outputs []string
	for _, m := range req.Messages {
		switch {
		case m.Role == "user" && !isOpenClawContext(contentText(m.Content)) && !isHookContext(contentText(m.Content)):
			lastUser, callsAfter, outputs = withoutReminder(userText(m.Content)), false, nil
		case m.Role == "assistant" && len(m.ToolCalls) > 0 && string(m.ToolCalls) != "null":
			callsAfter = true
		case m.Role == "tool":
			outputs = append(outputs, contentText(m.Content))
		}
	}
	// Factory Droid loads MCP tools through its ToolSearch: its recall
	// takes that step first (droid.go); other clients offer the tools.
	recall := s.chatRecallStep
	if hasTool(toolNames(req.Tools), "ToolSearch") {
		recall = func(body []byte, _ string) (Reply, bool) { return s.droidRecall(body) }
	}
	reply, ok := recall(body, lastUser)
	if !ok {
		reply = s.Script(lastUser, callsAfter, outputs, toolNames(req.Tools), body)
	}
	reply.Input = max(reply.Input, Usage(body))
	id := fmt.Sprintf("chatcmpl-fake-%03d", seq)
	var calls []map[string]any
	for i, c := range reply.Calls {
		calls = append(calls, map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": c.Arguments}})
	}
	finish := "stop"
	msg := map[string]any{"role": "assistant", "content": reply.Text}
	if len(calls) > 0 {
		finish, msg["content"], msg["tool_calls"] = "tool_calls", nil, calls
	}
	output := int64(len(reply.Text)/4 + 8*len(reply.Calls) + 1)
	usage := map[string]any{"prompt_tokens": reply.Input, "completion_tokens": output, "total_tokens": reply.Input + output}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "object": "chat.completion", "created": 1700000000, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	ev := newSSE(w)
	chunk := func(delta map[string]any, finish any, usage any) {
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1700000000, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		if usage != nil {
			c["choices"], c["usage"] = []any{}, usage
		}
		data, _ := json.Marshal(c)
		ev.data(string(data))
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil, nil)
	if len(calls) > 0 {
		chunk(map[string]any{"tool_calls": calls}, nil, nil)
	} else {
		chunk(map[string]any{"content": reply.Text}, nil, nil)
	}
	chunk(map[string]any{}, finish, nil)
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		chunk(nil, nil, usage)
	}
	ev.data("[DONE]")
}
