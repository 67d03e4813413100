package openai

import (
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// TestDroid: Droid's compaction request gets the summary in <summary> tags
// (Droid retries without them), and a shell marker calls Droid's Execute
// tool with the fields Droid requires.
func TestDroid(t *testing.T) {
	s := &Server{}
	r := s.Script("Please summarize the following conversation:\n```\n…\n```\n\n"+DroidCompactionCue, false, nil, nil, nil)
	if r.Text != "<summary>\n"+SummaryText+"\n</summary>" {
		t.Errorf("compaction reply %q", r.Text)
	}
	r = s.Script("[[shell: echo hi]]", false, nil, []string{"Read", "Execute"}, nil)
	if len(r.Calls) != 1 || r.Calls[0].Name != "Execute" {
		t.Fatalf("calls %+v, want one Execute call", r.Calls)
	}
	var args map[string]string
	if err := json.Unmarshal([]byte(r.Calls[0].Arguments), &args); err != nil || args["command"] != "echo hi" ||
		args["riskLevel"] != "low" || len(strings.Fields(args["summary"])) < 3 || args["riskLevelReason"] == "" {
		t.Errorf("Execute arguments %s", r.Calls[0].Arguments)
	}
}

// TestDroidPad: [[pad: N]] answers with about N bytes of filler that holds
// no digit (no number fact for audit to find).
func TestDroidPad(t *testing.T) {
	r := (&Server{}).Script("Notes. [[pad: 5000]]", false, nil, nil, nil)
	if len(r.Text) < 5000 || len(r.Text) > 5200 || strings.ContainsAny(r.Text, "0123456789") {
		t.Errorf("pad reply of %d bytes", len(r.Text))
	}
}

// TestDroidRecall walks the recall as Droid 0.215 offers ctxfold's tools:
// deferred (ToolSearch first), then search_history, read_turns on the
// covered hit, then text.
func TestDroidRecall(t *testing.T) {
	s := &Server{}
	reminder := `{"role":"user","content":[{"type":"text","text":"<system-reminder>\nDeferred tools:\nctxfold___search_history\nctxfold___read_turns\n</system-reminder>"}]}`
	prompt := `{"role":"user","content":"Find it. [[recall: checkpoint-42]]"}`
	tools := `"tools":[{"type":"function","function":{"name":"ToolSearch"}},{"type":"function","function":{"name":"Execute"}}]`
	step := func(msgs ...string) Reply {
		t.Helper()
		r, ok := s.droidRecall([]byte(`{"messages":[` + strings.Join(msgs, ",") + `],` + tools + `}`))
		if !ok {
			t.Fatalf("no recall step for %v", msgs)
		}
		return r
	}
	r := step(reminder, prompt)
	if len(r.Calls) != 1 || r.Calls[0].Name != "ToolSearch" || !strings.Contains(r.Calls[0].Arguments, "select:ctxfold___search_history") {
		t.Fatalf("first step %+v, want ToolSearch select", r)
	}
	ts := `{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"ToolSearch","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"loaded"}`
	r = step(reminder, prompt, ts)
	if len(r.Calls) != 1 || r.Calls[0].Name != "ctxfold___search_history" || !strings.Contains(r.Calls[0].Arguments, `"checkpoint-42"`) {
		t.Fatalf("second step %+v, want search_history", r)
	}
	hits := `{"hits":[{"id":"n1","status":"visible"},{"id":"n2","status":"covered"}]}`
	sh := `{"role":"assistant","tool_calls":[{"id":"c2","type":"function","function":{"name":"ctxfold___search_history","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c2","content":` + strconv.Quote(hits) + `}`
	r = step(reminder, prompt, ts, sh)
	if len(r.Calls) != 1 || r.Calls[0].Name != "ctxfold___read_turns" || r.Calls[0].Arguments != `{"ids":["n2"]}` {
		t.Fatalf("third step %+v, want read_turns of the covered hit n2", r)
	}
	rt := `{"role":"assistant","tool_calls":[{"id":"c3","type":"function","function":{"name":"ctxfold___read_turns","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c3","content":"turn"}`
	if r = step(reminder, prompt, ts, sh, rt); r.Text == "" || len(r.Calls) > 0 {
		t.Fatalf("last step %+v, want text", r)
	}
	if _, ok := s.droidRecall([]byte(`{"messages":[` + prompt + `,{"role":"user","content":"next prompt"}]}`)); ok {
		t.Fatal("a later prompt is still taken as a recall step")
	}
}

// TestHookContextIsNoPrompt: ctxfold's context, sent by Droid as a user
// message after a tool result, is not taken as the prompt (the markers of
// the requests it quotes are not run again).
func TestHookContextIsNoPrompt(t *testing.T) {
	srv := &Server{}
	body := `{"model":"m","messages":[{"role":"user","content":"Go. [[shell: echo one]]"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"Execute","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"one"},` +
		`{"role":"user","content":"ctxfold: 1 fact follows.\n- request [x]: Earlier. [[shell: echo again]]"}],` +
		`"tools":[{"type":"function","function":{"name":"Execute"}}]}`
	rec := httptest.NewRecorder()
	srv.chat(rec, []byte(body), 1)
	if strings.Contains(rec.Body.String(), "tool_calls") || !strings.Contains(rec.Body.String(), "Done: 1 tool output") {
		t.Fatalf("reply %s", rec.Body.String())
	}
}
