package anthropic

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// writeSSE streams the reply as the Messages API does: message_start (its
// usage counting one output token, as a stream starts), one
// start/delta/stop triple per block — a thinking block's delta is its
// signature, its thinking omitted — then, after the reply's UsageDelay,
// message_delta with the stop reason and the output usage, message_stop.
func writeSSE(w http.ResponseWriter, id, model string, reply Reply, in, out int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fl, _ := w.(http.Flusher)
	ev := func(name string, v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		if fl != nil {
			fl.Flush()
		}
	}
	ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": usageObj(in, 1),
	}})
	for i, b := range reply.Content {
		start := func(block map[string]any) {
			ev("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": block})
		}
		delta := func(d map[string]any) {
			ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d})
		}
		switch b.Type {
		case "tool_use":
			start(map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}})
			delta(map[string]any{"type": "input_json_delta", "partial_json": string(b.Input)})
		case "thinking":
			start(map[string]any{"type": "thinking", "thinking": "", "signature": ""})
			delta(map[string]any{"type": "signature_delta", "signature": b.Signature})
		default:
			start(map[string]any{"type": "text", "text": ""})
			delta(map[string]any{"type": "text_delta", "text": b.Text})
		}
		ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	time.Sleep(reply.UsageDelay)
	ev("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": reply.StopReason, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": out}})
	ev("message_stop", map[string]any{"type": "message_stop"})
}
