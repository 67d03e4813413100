package openai

import (
	"encoding/json"
	"strings"
	"testing"
)

// chatReply posts a non-streaming Chat Completions request and returns its
// message.
func chatReply(t *testing.T, url, tools, messages string) map[string]any {
	t.Helper()
	out := post(t, url+"/chat/completions", `{"model":"m","tools":[`+tools+`],"messages":[`+messages+`]}`)
	var r struct {
		Choices []struct {
			Message map[string]any `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Choices) != 1 {
		t.Fatalf("reply %s: %v", out, err)
	}
	return r.Choices[0].Message
}

// callOf is the one tool call of a reply message: its name and arguments.
func callOf(t *testing.T, m map[string]any) (string, string) {
	t.Helper()
	calls, _ := m["tool_calls"].([]any)
	if len(calls) != 1 {
		t.Fatalf("want one tool call, got %v", m)
	}
	f := calls[0].(map[string]any)["function"].(map[string]any)
	return f["name"].(string), f["arguments"].(string)
}

// The shapes are what Qwen Code 0.24.4 sent with the server's tools
// always loaded: functions named mcp__ctxfold__…, the user's prompt as
// text parts, the results as tool messages.
func TestChatRecall(t *testing.T) {
	_, url := start(t)
	tools := `{"type":"function","function":{"name":"run_shell_command"}},{"type":"function","function":{"name":"mcp__ctxfold__search_history"}},{"type":"function","function":{"name":"mcp__ctxfold__read_turns"}}`
	user := `{"role":"user","content":[{"type":"text","text":"<system-reminder>x</system-reminder>"},{"type":"text","text":"Find it. [[recall: build-42-ok]]"}]}`
	name, args := callOf(t, chatReply(t, url, tools, user))
	if name != "mcp__ctxfold__search_history" || args != `{"query":"build-42-ok"}` {
		t.Fatalf("first step: %s %s", name, args)
	}
	hits := "Found 2 hits:\n- n9 · user · visible\n- n4 · tool · covered by summary s1 · build-42-ok"
	res, _ := json.Marshal(hits)
	msgs := user + `,{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"mcp__ctxfold__search_history","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":` + string(res) + `}`
	name, args = callOf(t, chatReply(t, url, tools, msgs))
	if name != "mcp__ctxfold__read_turns" || args != `{"ids":["n4"]}` {
		t.Fatalf("after search_history: %s %s, want read_turns on the covered hit n4", name, args)
	}
	msgs += `,{"role":"assistant","content":null,"tool_calls":[{"id":"c2","type":"function","function":{"name":"mcp__ctxfold__read_turns","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c2","content":"x"}`
	if m := chatReply(t, url, tools, msgs); m["tool_calls"] != nil || !strings.Contains(m["content"].(string), "Recalled") {
		t.Fatalf("after read_turns: %v, want a closing reply", m)
	}
	// Without the tool, the fake says so instead of calling a missing one.
	if m := chatReply(t, url, `{"type":"function","function":{"name":"run_shell_command"}}`, user); m["tool_calls"] != nil {
		t.Fatalf("recall without the tool: %v", m)
	}
	// Markers quoted in a hook's context part (ctxfold quotes the folded
	// requests) are not the user's: a plain reply.
	hooked := `{"role":"user","content":[{"type":"text","text":"What next?"},{"type":"text","text":"<qwen:user-prompt-submit-context>- request: [[shell: ls /x]] [[recall: y]]</qwen:user-prompt-submit-context>"}]}`
	if m := chatReply(t, url, tools, hooked); m["tool_calls"] != nil || m["content"] != "OK." {
		t.Fatalf("markers in a hook's context: %v", m)
	}
}
