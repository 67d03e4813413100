package openai

import (
	"encoding/json"
	"testing"
)

// The recall on Chat Completions, as OpenCode offers ctxfold's MCP tools:
// search_history for the query, read_turns on the first covered hit,
// then text.
func TestChatRecall(t *testing.T) {
	s := &Server{}
	tools := `[{"type":"function","function":{"name":"bash"}},{"type":"function","function":{"name":"ctxfold_search_history"}},{"type":"function","function":{"name":"ctxfold_read_turns"}}]`
	req := func(msgs string) chatRequest {
		var r chatRequest
		if err := json.Unmarshal([]byte(`{"tools":`+tools+`,"messages":`+msgs+`}`), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	user := `{"role":"user","content":"Find it. [[recall: the lock]]"}`
	r, ok := s.chatRecall(req(`[`+user+`]`), "Find it. [[recall: the lock]]")
	if !ok || len(r.Calls) != 1 || r.Calls[0].Name != "ctxfold_search_history" || r.Calls[0].Arguments != `{"query":"the lock"}` {
		t.Fatalf("first step: %+v", r)
	}
	hits := `{"hits":[{"id":"n9","status":"visible"},{"id":"n2","status":"covered"}]}`
	b, _ := json.Marshal(hits)
	msgs := `[` + user + `,{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"ctxfold_search_history","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":` + string(b) + `}]`
	r, _ = s.chatRecall(req(msgs), "Find it. [[recall: the lock]]")
	if len(r.Calls) != 1 || r.Calls[0].Name != "ctxfold_read_turns" || r.Calls[0].Arguments != `{"ids":["n2"]}` {
		t.Fatalf("second step: %+v", r)
	}
	msgs = msgs[:len(msgs)-1] + `,{"role":"assistant","tool_calls":[{"id":"c2","type":"function","function":{"name":"ctxfold_read_turns","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"c2","content":"the turn"}]`
	if r, _ = s.chatRecall(req(msgs), "Find it. [[recall: the lock]]"); len(r.Calls) != 0 || r.Text == "" {
		t.Fatalf("last step: %+v", r)
	}
	if _, ok := s.chatRecall(req(`[{"role":"user","content":"hi"}]`), "hi"); ok {
		t.Error("a prompt without the marker recalled")
	}
}
