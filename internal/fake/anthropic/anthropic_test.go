package anthropic

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func req(t *testing.T, msgs ...Message) Request {
	t.Helper()
	return Request{Model: "m", Messages: msgs, Tools: []struct {
		Name string `json:"name"`
	}{{Name: "Bash"}, {Name: "Agent"}}}
}

func user(text string) Message {
	b, _ := json.Marshal(text)
	return Message{Role: "user", Content: b}
}

func TestScriptMarkers(t *testing.T) {
	cases := []struct {
		name  string
		msgs  []Message
		stop  string
		tools []string
		input string
	}{
		{"plain", []Message{user("hello")}, "end_turn", nil, ""},
		{"bash", []Message{user("run [[bash:echo hi]] now")}, "tool_use", []string{"Bash"}, `"command":"echo hi"`},
		{"parallel", []Message{user("[[parallel]]")}, "tool_use", []string{"Bash", "Bash"}, "parallel-one"},
		{"error", []Message{user("[[toolerror]]")}, "tool_use", []string{"Bash"}, "exit 3"},
		{"agent", []Message{user("[[agent]]")}, "tool_use", []string{"Agent"}, "subagent_type"},
		{"compaction", []Message{user("Your task is to create a detailed summary of the conversation so far")}, "end_turn", nil, ""},
		// A system-role message after the user's turn (Claude Code 2.1.3xx)
		// does not hide the marker.
		{"system after", []Message{user("[[bash:ls]]"), {Role: "system", Content: json.RawMessage(`"env"`)}}, "tool_use", []string{"Bash"}, `"command":"ls"`},
		{"after result", []Message{user("[[bash:ls]]"), {Role: "user", Content: json.RawMessage(`[{"type":"tool_result","tool_use_id":"x","content":"ok"}]`)}}, "end_turn", nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Script(req(t, c.msgs...))
			if r.StopReason != c.stop {
				t.Errorf("stop %q, want %q", r.StopReason, c.stop)
			}
			var tools []string
			var inputs string
			for _, b := range r.Content {
				if b.Type == "tool_use" {
					tools = append(tools, b.Name)
					inputs += string(b.Input)
				}
			}
			if strings.Join(tools, ",") != strings.Join(c.tools, ",") {
				t.Errorf("tools %v, want %v", tools, c.tools)
			}
			if !strings.Contains(inputs, c.input) {
				t.Errorf("inputs %s lack %s", inputs, c.input)
			}
			if c.name == "compaction" && !strings.Contains(r.Content[0].Text, "<summary>") {
				t.Errorf("compaction reply %q has no summary", r.Content[0].Text)
			}
		})
	}
}

func TestStartRefusesNonLoopback(t *testing.T) {
	if s, err := Start(Options{Addr: "0.0.0.0:0"}); err == nil {
		s.Close()
		t.Fatal("listening on every interface was accepted")
	}
}

// TestServerStreamsAndRecords drives the server as a client does: a
// streamed request gets the Messages SSE sequence with the tool call and a
// deterministic usage, and its body is recorded.
func TestServerStreamsAndRecords(t *testing.T) {
	dir := t.TempDir()
	s, err := Start(Options{RecordDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	body := `{"model":"m","stream":true,"max_tokens":10,"messages":[{"role":"user","content":"[[bash:echo x]]"}]}`
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Post(s.URL+"/v1/messages", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var events []string
	var sawInput, sawUsage bool
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if ev, ok := strings.CutPrefix(line, "event: "); ok {
			events = append(events, ev)
		}
		if strings.Contains(line, `"partial_json":"{\"command\":\"echo x\"`) {
			sawInput = true
		}
		if strings.Contains(line, `"input_tokens":`+itoa(Usage([]byte(body)))) {
			sawUsage = true
		}
	}
	want := "message_start content_block_start content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(events, " "); got != want {
		t.Errorf("events %q, want %q", got, want)
	}
	if !sawInput || !sawUsage {
		t.Errorf("tool input streamed %v, usage %v", sawInput, sawUsage)
	}
	rec, err := os.ReadFile(filepath.Join(dir, "0001-messages.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rec), `"[[bash:echo x]]"`) {
		t.Errorf("recorded body %s", rec)
	}
	resp2, err := c.Post(s.URL+"/v1/messages/count_tokens", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var ct struct {
		InputTokens int `json:"input_tokens"`
	}
	_ = json.NewDecoder(resp2.Body).Decode(&ct)
	resp2.Body.Close()
	if ct.InputTokens != Usage([]byte(body)) {
		t.Errorf("count_tokens %d, want %d", ct.InputTokens, Usage([]byte(body)))
	}
	if s.Requests() != 2 {
		t.Errorf("%d requests recorded, want 2", s.Requests())
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// A request without "stream" gets one JSON message with the scripted
// content and the request number in its id.
func TestServerPlainJSON(t *testing.T) {
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Post(s.URL+"/v1/messages", "application/json",
		strings.NewReader(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"[[parallel]]"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m struct {
		ID         string  `json:"id"`
		StopReason string  `json:"stop_reason"`
		Content    []Block `json:"content"`
		Usage      struct {
			InputTokens int `json:"input_tokens"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	if m.ID != "msg_fake_req0001" || m.StopReason != "tool_use" || len(m.Content) != 3 || m.Usage.InputTokens == 0 {
		t.Errorf("reply %+v", m)
	}
	if m.Content[1].ID == "" || m.Content[1].ID == m.Content[2].ID {
		t.Errorf("tool_use ids %q %q: want distinct ids", m.Content[1].ID, m.Content[2].ID)
	}
}

// MarkRecall drives ctxfold's MCP recall: search_history, then read_turns
// on the first covered hit of its (structured) result, then a reply.
func TestScriptRecall(t *testing.T) {
	tools := []struct {
		Name string `json:"name"`
	}{{Name: toolSearchHistory}, {Name: toolReadTurns}}
	user := func(content string) Message { return Message{Role: "user", Content: json.RawMessage(content)} }
	asst := func(name string) Message {
		return Message{Role: "assistant", Content: json.RawMessage(`[{"type":"tool_use","id":"t1","name":"` + name + `","input":{}}]`)}
	}
	r := Script(Request{Tools: tools, Messages: []Message{user(`"Find it. [[recall:needle]]"`)}})
	if len(r.Content) != 1 || r.Content[0].Name != toolSearchHistory || string(r.Content[0].Input) != `{"query":"needle"}` {
		t.Fatalf("first step: %+v", r)
	}
	hits := `{"hits":[{"id":"n9","status":"visible"},{"id":"n2","status":"covered"}]}`
	b, _ := json.Marshal(hits)
	r = Script(Request{Tools: tools, Messages: []Message{user(`"x"`), asst(toolSearchHistory),
		user(`[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":` + string(b) + `}]}]`)}})
	if len(r.Content) != 1 || r.Content[0].Name != toolReadTurns || string(r.Content[0].Input) != `{"ids":["n2"]}` {
		t.Fatalf("second step: %+v", r)
	}
	r = Script(Request{Tools: tools, Messages: []Message{user(`"x"`), asst(toolReadTurns),
		user(`[{"type":"tool_result","tool_use_id":"t1","content":"=== n2"}]`)}})
	if r.StopReason != "end_turn" {
		t.Fatalf("third step: %+v", r)
	}
	if r := Script(Request{Messages: []Message{user(`"[[recall:needle]]"`)}}); r.StopReason != "end_turn" {
		t.Fatalf("without the tools the marker must not call them: %+v", r)
	}
}
