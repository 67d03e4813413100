package openai

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

func start(t *testing.T) (*Server, string) {
	t.Helper()
	srv, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l, err := Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(10 * time.Second):
			t.Error("server did not stop")
		}
	})
	if !strings.HasPrefix(l.Addr().String(), "127.0.0.1:") {
		t.Fatalf("listening on %s, not loopback", l.Addr())
	}
	return srv, "http://" + l.Addr().String() + "/v1"
}

func post(t *testing.T, url, body string) string {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b.String())
	}
	return b.String()
}

// events returns the data of each SSE event named typ.
func events(stream, typ string) []map[string]any {
	var out []map[string]any
	for _, block := range strings.Split(stream, "\n\n") {
		if !strings.HasPrefix(block, "event: "+typ+"\n") {
			continue
		}
		_, data, _ := strings.Cut(block, "data: ")
		var m map[string]any
		if json.Unmarshal([]byte(data), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

func TestResponsesScript(t *testing.T) {
	srv, url := start(t)
	tools := `"tools":[{"type":"function","name":"exec_command"}]`
	user := func(text string) string {
		return `{"type":"message","role":"user","content":[{"type":"input_text","text":` + string(mustJSON(text)) + `}]}`
	}
	cases := []struct {
		name, input string
		calls       int
		text        string
	}{
		{"plain", user("hi"), 0, "OK."},
		{"shell", user("run [[shell: echo x]]"), 1, ""},
		{"parallel", user("[[parallel: echo a ;; echo b ;; echo c]]"), 3, ""},
		{"after the call", user("[[shell: echo x]]") + `,{"type":"function_call","call_id":"c1","name":"exec_command","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"x"}`, 0, "Done: 1 tool output(s) read."},
		{"compaction", user("old") + "," + user("You are performing a CONTEXT CHECKPOINT COMPACTION."), 0, SummaryText},
	}
	for _, c := range cases {
		stream := post(t, url+"/responses", `{"model":"m","stream":true,`+tools+`,"input":[`+c.input+`]}`)
		done := events(stream, "response.output_item.done")
		completed := events(stream, "response.completed")
		if len(completed) != 1 {
			t.Fatalf("%s: %d completed events", c.name, len(completed))
		}
		var calls int
		var text string
		for _, d := range done {
			it := d["item"].(map[string]any)
			switch it["type"] {
			case "function_call":
				calls++
				if it["name"] != "exec_command" || !strings.Contains(it["arguments"].(string), `"cmd":"echo`) {
					t.Errorf("%s: call %v", c.name, it)
				}
			case "message":
				text = it["content"].([]any)[0].(map[string]any)["text"].(string)
			}
		}
		if calls != c.calls || text != c.text {
			t.Errorf("%s: %d calls, text %q; want %d, %q", c.name, calls, text, c.calls, c.text)
		}
		usage := completed[0]["response"].(map[string]any)["usage"].(map[string]any)
		if usage["input_tokens"].(float64) < 1 || usage["total_tokens"].(float64) != usage["input_tokens"].(float64)+usage["output_tokens"].(float64) {
			t.Errorf("%s: usage %v", c.name, usage)
		}
	}
	if got := len(srv.Requests()); got != len(cases) {
		t.Errorf("%d requests recorded, want %d", got, len(cases))
	}
}

func TestUsageDeterministic(t *testing.T) {
	_, url := start(t)
	body := `{"model":"m","stream":true,"input":[{"type":"message","role":"user","content":"[[inflate]] hi"}]}`
	a, b := post(t, url+"/responses", body), post(t, url+"/responses", body)
	ua := events(a, "response.completed")[0]["response"].(map[string]any)["usage"]
	ub := events(b, "response.completed")[0]["response"].(map[string]any)["usage"]
	if string(mustJSON(ua)) != string(mustJSON(ub)) || ua.(map[string]any)["input_tokens"].(float64) != InflatedInput {
		t.Errorf("usage %v then %v", ua, ub)
	}
	plain := `{"model":"m","input":[{"type":"message","role":"user","content":"hi"}]}`
	if got := Usage([]byte(plain)); got != int64(len(plain)/4) {
		t.Errorf("Usage = %d", got)
	}
}

func TestChatCompletions(t *testing.T) {
	_, url := start(t)
	plain := post(t, url+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hello"}]}`)
	var resp struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
		Usage struct {
			Prompt int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(plain), &resp); err != nil || resp.Choices[0].Message.Content != "OK." || resp.Usage.Prompt < 1 {
		t.Fatalf("%v: %s", err, plain)
	}
	stream := post(t, url+"/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"tools":[{"type":"function","function":{"name":"shell"}}],"messages":[{"role":"user","content":"[[shell: ls]]"}]}`)
	if !strings.Contains(stream, `"tool_calls":[{"function":`) || !strings.Contains(stream, `"prompt_tokens":`) || !strings.HasSuffix(stream, "data: [DONE]\n\n") {
		t.Errorf("stream %s", stream)
	}
}

func TestRejectsBadRequests(t *testing.T) {
	_, url := start(t)
	c := &http.Client{Timeout: 10 * time.Second}
	for _, path := range []string{"/responses", "/nope"} {
		resp, err := c.Post(url+path, "application/json", strings.NewReader(`{not json`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: status %d", path, resp.StatusCode)
		}
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }
