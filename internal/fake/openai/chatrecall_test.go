package openai

import (
	"encoding/json"
	"os"
	"path/filepath"
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

// chatCalls posts a streaming Chat Completions request and returns the
// tool calls (name and arguments) and the text of its reply.
func chatCalls(t *testing.T, url, tools, messages string) (calls [][2]string, text string) {
	t.Helper()
	stream := post(t, url+"/chat/completions", `{"model":"gpt-4.1","stream":true,"tools":[`+tools+`],"messages":[`+messages+`]}`)
	for _, line := range strings.Split(stream, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					ToolCalls []struct {
						Function struct{ Name, Arguments string } `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
			} `json:"choices"`
		}
		_ = json.Unmarshal([]byte(data), &c)
		for _, ch := range c.Choices {
			text += ch.Delta.Content
			for _, tc := range ch.Delta.ToolCalls {
				calls = append(calls, [2]string{tc.Function.Name, tc.Function.Arguments})
			}
		}
	}
	return calls, text
}

// The shapes are what GitHub Copilot CLI 1.0.102 sends (docs/HOOKS.md):
// the MCP tools as functions "ctxfold-<tool>", the tool's result as the
// tool message's text. A marker inside the <system_reminder> a hook added
// to the prompt is not the user's.
func TestChatRecallCopilotNames(t *testing.T) {
	_, url := start(t)
	tools := `{"type":"function","function":{"name":"bash"}},{"type":"function","function":{"name":"ctxfold-read_turns"}},{"type":"function","function":{"name":"ctxfold-search_history"}}`
	user := `{"role":"user","content":"Find it. [[recall: checkpoint-42]]"}`
	calls, _ := chatCalls(t, url, tools, user)
	if len(calls) != 1 || calls[0][0] != "ctxfold-search_history" || calls[0][1] != `{"query":"checkpoint-42"}` {
		t.Fatalf("first step: %v", calls)
	}
	out, _ := json.Marshal(`{"hits":[{"id":"n9","status":"visible"},{"id":"n4","status":"covered"}]}`)
	hist := user + `,{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"ctxfold-search_history","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":` + string(out) + `}`
	calls, _ = chatCalls(t, url, tools, hist)
	if len(calls) != 1 || calls[0][0] != "ctxfold-read_turns" || calls[0][1] != `{"ids":["n4"]}` {
		t.Fatalf("after search_history: %v", calls)
	}
	hist += `,{"role":"assistant","content":null,"tool_calls":[{"id":"c2","type":"function","function":{"name":"ctxfold-read_turns","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c2","content":"x"}`
	if calls, text := chatCalls(t, url, tools, hist); len(calls) != 0 || text != "Recalled the covered turn." {
		t.Fatalf("after read_turns: %v %q", calls, text)
	}
	quoted := `{"role":"user","content":"What next?\n\n<system_reminder>\n- request: Check. [[shell: ls /x]]\n</system_reminder>"}`
	if calls, text := chatCalls(t, url, tools, quoted); len(calls) != 0 || text != "OK." {
		t.Fatalf("a marker quoted in the hook's reminder was obeyed: %v %q", calls, text)
	}
}

// The recall as GitHub Copilot CLI 1.0.102 really sent it
// (testdata/hook/copilot, recorded by interop/copilot/hooks.sh): its
// search_history result (the text, then the structured result) makes the
// fake call read_turns on the covered hit.
func TestChatRecallOnRecordedCopilotMessages(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "hook", "copilot", "1.0.102", "recall-messages.json"))
	if err != nil {
		t.Fatal(err)
	}
	var msgs []json.RawMessage
	if err := json.Unmarshal(b, &msgs); err != nil || len(msgs) < 2 {
		t.Fatalf("%d messages: %v", len(msgs), err)
	}
	_, url := start(t)
	tools := `{"type":"function","function":{"name":"ctxfold-read_turns"}},{"type":"function","function":{"name":"ctxfold-search_history"}}`
	hist := `{"role":"user","content":"Find it. [[recall: checkpoint-42-reached]]"},` + string(msgs[0]) + "," + string(msgs[1])
	calls, _ := chatCalls(t, url, tools, hist)
	var args struct{ IDs []string }
	if len(calls) != 1 || calls[0][0] != "ctxfold-read_turns" || json.Unmarshal([]byte(calls[0][1]), &args) != nil ||
		len(args.IDs) != 1 || args.IDs[0] != "<id>" {
		t.Fatalf("after the recorded search_history: %v, want read_turns on the covered hit", calls)
	}
}

// The recall as OpenCode offers ctxfold's MCP tools: functions named
// "ctxfold_<tool>", the results as tool messages.
func TestChatRecallOpenCodeNames(t *testing.T) {
	_, url := start(t)
	tools := `{"type":"function","function":{"name":"bash"}},{"type":"function","function":{"name":"ctxfold_search_history"}},{"type":"function","function":{"name":"ctxfold_read_turns"}}`
	user := `{"role":"user","content":"Find it. [[recall: the lock]]"}`
	name, args := callOf(t, chatReply(t, url, tools, user))
	if name != "ctxfold_search_history" || args != `{"query":"the lock"}` {
		t.Fatalf("first step: %s %s", name, args)
	}
	hits, _ := json.Marshal(`{"hits":[{"id":"n9","status":"visible"},{"id":"n2","status":"covered"}]}`)
	msgs := user + `,{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"ctxfold_search_history","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":` + string(hits) + `}`
	name, args = callOf(t, chatReply(t, url, tools, msgs))
	if name != "ctxfold_read_turns" || args != `{"ids":["n2"]}` {
		t.Fatalf("second step: %s %s", name, args)
	}
	msgs += `,{"role":"assistant","tool_calls":[{"id":"c2","type":"function","function":{"name":"ctxfold_read_turns","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c2","content":"the turn"}`
	if m := chatReply(t, url, tools, msgs); m["tool_calls"] != nil || m["content"] == "" {
		t.Fatalf("last step: %v", m)
	}
	// ctxfold's injected context, a part of OpenCode's prompt, quotes
	// earlier markers: the fake does not obey them.
	injected := `{"role":"user","content":[{"type":"text","text":"What next?"},{"type":"text","text":"ctxfold: OpenCode's compaction summary dropped 2 of the 9 facts\n- request: [[recall: the lock]]"}]}`
	if m := chatReply(t, url, tools, injected); m["tool_calls"] != nil {
		t.Fatalf("a marker quoted in ctxfold's injected part was obeyed: %v", m)
	}
}
