package openai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// responsesRequest is the part of a Responses API request the script reads.
type responsesRequest struct {
	Model  string            `json:"model"`
	Input  []json.RawMessage `json:"input"`
	Tools  []tool            `json:"tools"`
	Stream bool              `json:"stream"`
	// rawTools are the tool definitions as sent (namespaces included).
	rawTools []json.RawMessage
}

type tool struct {
	Type     string `json:"type"`
	Name     string `json:"name"`
	Function *struct {
		Name string `json:"name"`
	} `json:"function"`
}

func toolNames(ts []tool) []string {
	var out []string
	for _, t := range ts {
		switch {
		case t.Name != "":
			out = append(out, t.Name)
		case t.Function != nil:
			out = append(out, t.Function.Name)
		}
	}
	return out
}

type inputItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	Output  json.RawMessage `json:"output"`
}

// contentText joins the text of a string or of a list of parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
		b.WriteString("\n")
	}
	return b.String()
}

// conversation finds the last user message and what followed it: whether
// the model called tools, and the tool outputs.
func conversation(items []json.RawMessage) (lastUser string, callsAfter bool, outputs []string) {
	for _, raw := range items {
		var it inputItem
		if json.Unmarshal(raw, &it) != nil {
			continue
		}
		switch {
		case it.Type == "message" && it.Role == "user" || it.Type == "" && it.Role == "user":
			lastUser, callsAfter, outputs = contentText(it.Content), false, nil
		case strings.HasSuffix(it.Type, "_call"):
			callsAfter = true
		case strings.HasSuffix(it.Type, "_call_output"):
			outputs = append(outputs, string(it.Output))
		}
	}
	return lastUser, callsAfter, outputs
}

func (s *Server) responses(w http.ResponseWriter, body []byte, seq int) {
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "responses request: "+err.Error(), http.StatusBadRequest)
		return
	}
	lastUser, callsAfter, outputs := conversation(req.Input)
	reply, ok := s.recallStep(req, body, lastUser)
	if !ok {
		reply = s.Script(lastUser, callsAfter, outputs, toolNames(req.Tools), body)
	}
	if reply.Input == 0 {
		reply.Input = Usage(body)
	}
	respID := fmt.Sprintf("resp_fake_%03d", seq)
	var items []map[string]any
	if reply.Reasoning != "" {
		items = append(items, map[string]any{"type": "reasoning", "id": fmt.Sprintf("rs_fake_%03d", seq),
			"summary":           []map[string]any{{"type": "summary_text", "text": reply.Reasoning}},
			"encrypted_content": fmt.Sprintf("gAAAA-fake-encrypted-reasoning-%03d", seq)})
	}
	for i, c := range reply.Calls {
		it := map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_fake_%03d_%d", seq, i),
			"call_id": c.ID, "name": c.Name, "arguments": c.Arguments, "status": "completed"}
		if c.Namespace != "" {
			it["namespace"] = c.Namespace
		}
		if c.ToolSearch {
			it = map[string]any{"type": "tool_search_call", "id": fmt.Sprintf("ts_fake_%03d_%d", seq, i),
				"call_id": c.ID, "execution": "client", "arguments": json.RawMessage(c.Arguments), "status": "completed"}
		}
		if c.Custom {
			it = map[string]any{"type": "custom_tool_call", "id": fmt.Sprintf("ctc_fake_%03d_%d", seq, i),
				"call_id": c.ID, "name": c.Name, "input": c.Arguments, "status": "completed"}
		}
		items = append(items, it)
	}
	if len(reply.Calls) == 0 {
		items = append(items, map[string]any{"type": "message", "id": fmt.Sprintf("msg_fake_%03d", seq), "role": "assistant",
			"status": "completed", "content": []map[string]any{{"type": "output_text", "text": reply.Text, "annotations": []any{}}}})
	}
	output := int64(len(reply.Text)/4 + 8*len(reply.Calls) + 1)
	usage := map[string]any{"input_tokens": reply.Input, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": output, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": reply.Input + output}
	resp := map[string]any{"id": respID, "object": "response", "created_at": 1700000000, "model": req.Model, "status": "completed",
		"output": items, "usage": usage}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
		return
	}
	ev := newSSE(w)
	created := map[string]any{"id": respID, "object": "response", "created_at": 1700000000, "model": req.Model, "status": "in_progress", "output": []any{}}
	ev.send("response.created", map[string]any{"response": created})
	ev.send("response.in_progress", map[string]any{"response": created})
	for i, it := range items {
		added := map[string]any{}
		for k, v := range it {
			added[k] = v
		}
		added["status"] = "in_progress"
		switch it["type"] {
		case "message":
			added["content"] = []any{}
		case "function_call":
			added["arguments"] = ""
		case "custom_tool_call":
			added["input"] = ""
		case "reasoning":
			added["summary"] = []any{}
			delete(added, "status")
		}
		ev.send("response.output_item.added", map[string]any{"output_index": i, "item": added})
		if it["type"] == "message" {
			part := map[string]any{"type": "output_text", "text": "", "annotations": []any{}}
			ev.send("response.content_part.added", map[string]any{"item_id": it["id"], "output_index": i, "content_index": 0, "part": part})
			ev.send("response.output_text.delta", map[string]any{"item_id": it["id"], "output_index": i, "content_index": 0, "delta": reply.Text})
			ev.send("response.output_text.done", map[string]any{"item_id": it["id"], "output_index": i, "content_index": 0, "text": reply.Text})
			part["text"] = reply.Text
			ev.send("response.content_part.done", map[string]any{"item_id": it["id"], "output_index": i, "content_index": 0, "part": part})
		} else if it["type"] == "custom_tool_call" {
			ev.send("response.custom_tool_call_input.delta", map[string]any{"item_id": it["id"], "output_index": i, "delta": it["input"]})
			ev.send("response.custom_tool_call_input.done", map[string]any{"item_id": it["id"], "output_index": i, "input": it["input"]})
		} else if it["type"] == "function_call" {
			ev.send("response.function_call_arguments.delta", map[string]any{"item_id": it["id"], "output_index": i, "delta": it["arguments"]})
			ev.send("response.function_call_arguments.done", map[string]any{"item_id": it["id"], "output_index": i, "arguments": it["arguments"]})
		}
		ev.send("response.output_item.done", map[string]any{"output_index": i, "item": it})
	}
	ev.send("response.completed", map[string]any{"response": resp})
}

// sse writes server-sent events, numbering them as the API does.
type sse struct {
	w   http.ResponseWriter
	seq int
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &sse{w: w}
}

func (e *sse) send(typ string, fields map[string]any) {
	fields["type"] = typ
	fields["sequence_number"] = e.seq
	e.seq++
	data, _ := json.Marshal(fields)
	fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", typ, data)
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}

// data writes one unnamed event (Chat Completions streams these).
func (e *sse) data(s string) {
	fmt.Fprintf(e.w, "data: %s\n\n", s)
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}
