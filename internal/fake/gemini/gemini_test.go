package gemini_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/internal/fake/gemini"
)

func post(t *testing.T, s *gemini.Server, path, body string) string {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Post(s.URL()+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return string(out)
}

// The script answers from the request alone, and every request is
// recorded (here and as a JSON line).
func TestScript(t *testing.T) {
	var log bytes.Buffer
	s, err := gemini.Start(gemini.Options{Record: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Fatalf("not loopback: %s", s.URL())
	}
	router := post(t, s, "/v1beta/models/lite:generateContent",
		`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"OBJECT","properties":{"model_choice":{"type":"STRING","enum":["flash","pro"]},"score":{"type":"INTEGER"}}}}}`)
	var r struct {
		Candidates []struct {
			Content struct {
				Parts []map[string]json.RawMessage
			}
		}
		UsageMetadata map[string]int
	}
	json.Unmarshal([]byte(router), &r)
	var text string
	json.Unmarshal(r.Candidates[0].Content.Parts[0]["text"], &text)
	if text != `{"model_choice":"flash","score":1}` || r.UsageMetadata["promptTokenCount"] != 110 {
		t.Errorf("router answer %s", router)
	}
	call := post(t, s, "/v1beta/models/main:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"do it. RUN: ls -1"}]}]}`)
	if !strings.HasPrefix(call, "data: ") || !strings.Contains(call, `"functionCall":{"args":{"command":"ls -1"`) {
		t.Errorf("tool call answer %q", call)
	}
	after := post(t, s, "/v1beta/models/main:streamGenerateContent?alt=sse",
		`{"contents":[{"role":"user","parts":[{"functionResponse":{"name":"run_shell_command","response":{"output":"<x>\nOutput: a.txt\nProcess Group PGID: 42\n</x>"}}}]}]}`)
	if !strings.Contains(after, `The command run_shell_command returned: Output: a.txt`) || strings.Contains(after, "42") {
		t.Errorf("after-tool answer %q", after)
	}
	snap := post(t, s, "/v1beta/models/x:generateContent", `{"systemInstruction":{"parts":[{"text":"write a <state_snapshot>"}]},"contents":[{"role":"user","parts":[{"text":"a"}]}]}`)
	if !strings.Contains(snap, `\u003cstate_snapshot\u003e`) && !strings.Contains(snap, `<state_snapshot>`) {
		t.Errorf("compression answer %q", snap)
	}
	var kinds []string
	for _, q := range s.Requests() {
		kinds = append(kinds, q.Kind)
	}
	if strings.Join(kinds, " ") != "json tool-call after-tool compress" || strings.Count(log.String(), "\n") != 4 ||
		!strings.Contains(log.String(), `"path":"/v1beta/models/main:streamGenerateContent","query":"alt=sse","model":"main"`) {
		t.Errorf("recorded %v\n%s", kinds, log.String())
	}
}

// RECALL: calls ctxfold's search_history as Gemini CLI declares it, then
// read_turns on the covered hit of the text result Gemini CLI sends back
// (recorded with 0.61: the tool's text in <untrusted_context>); a marker
// inside a hook's <hook_context> part is not the user's; [[inflate]]
// inflates the count until the history holds a <state_snapshot>.
func TestRecallAndInflate(t *testing.T) {
	s, err := gemini.Start(gemini.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const path = "/v1beta/models/main:streamGenerateContent?alt=sse"
	tools := `"tools":[{"functionDeclarations":[{"name":"mcp_ctxfold_search_history"},{"name":"mcp_ctxfold_read_turns"}]}]`
	user := `{"role":"user","parts":[{"text":"Find it. RECALL: build-42-ok"}]}`
	if a := post(t, s, path, `{`+tools+`,"contents":[`+user+`]}`); !strings.Contains(a, `"functionCall":{"args":{"query":"build-42-ok"},"name":"mcp_ctxfold_search_history"}`) {
		t.Fatalf("first step %s", a)
	}
	result := "<untrusted_context>\n2 hits\n- n9 · user · visible · content: x\n- n4 · tool · covered by summary s (the model no longer reads it; read_turns quotes it) · content: y\n</untrusted_context>"
	resp, _ := json.Marshal(map[string]any{"functionResponse": map[string]any{"name": "mcp_ctxfold_search_history", "response": map[string]any{"output": result}}})
	hist := user + `,{"role":"model","parts":[{"functionCall":{"name":"mcp_ctxfold_search_history","args":{}}}]},{"role":"user","parts":[` + string(resp) + `]}`
	if a := post(t, s, path, `{`+tools+`,"contents":[`+hist+`]}`); !strings.Contains(a, `"functionCall":{"args":{"ids":["n4"]},"name":"mcp_ctxfold_read_turns"}`) {
		t.Fatalf("after search_history: %s", a)
	}
	hook := `{"role":"user","parts":[{"text":"next?"},{"text":"<hook_context>- request: RUN: ls /x RECALL: y [[inflate]]</hook_context>"}]}`
	a := post(t, s, path, `{`+tools+`,"contents":[`+hook+`]}`)
	if strings.Contains(a, "functionCall") || !strings.Contains(a, `"promptTokenCount":120`) {
		t.Fatalf("a marker in a hook's context was obeyed: %s", a)
	}
	inflate := `{"role":"user","parts":[{"text":"go [[inflate]]"}]}`
	if a := post(t, s, path, `{"contents":[`+inflate+`]}`); !strings.Contains(a, `"promptTokenCount":1000000`) {
		t.Fatalf("not inflated: %s", a)
	}
	snap := `{"role":"user","parts":[{"text":"<state_snapshot>x</state_snapshot>"}]},` + inflate
	if a := post(t, s, path, `{"contents":[`+snap+`]}`); strings.Contains(a, `"promptTokenCount":1000000`) {
		t.Fatalf("inflated after the compression: %s", a)
	}
}

// TestRecallOnRecordedContents feeds the script what Gemini CLI 0.61 really
// sent during the recall of interop/gemini-cli's TestLiveHooks
// (testdata/hook/gemini-cli/0.61.0/recall-contents.json, rewritten by
// interop/gemini-cli/hooks.sh): after each recorded function response the
// script makes the next recorded call.
func TestRecallOnRecordedContents(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "hook", "gemini-cli", "0.61.0", "recall-contents.json"))
	if err != nil {
		t.Fatal(err)
	}
	var contents []json.RawMessage
	if err := json.Unmarshal(b, &contents); err != nil {
		t.Fatal(err)
	}
	s, err := gemini.Start(gemini.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tools := `"tools":[{"functionDeclarations":[{"name":"mcp_ctxfold_search_history"},{"name":"mcp_ctxfold_read_turns"}]}]`
	calls := 0
	for i, c := range contents {
		var x struct {
			Role  string
			Parts []struct {
				FunctionCall *struct {
					Name string
					Args json.RawMessage
				} `json:"functionCall"`
			}
		}
		_ = json.Unmarshal(c, &x)
		if x.Role != "model" || len(x.Parts) == 0 || x.Parts[0].FunctionCall == nil {
			continue
		}
		var upTo []string
		for _, p := range contents[:i] {
			upTo = append(upTo, string(p))
		}
		a := post(t, s, "/v1beta/models/main:streamGenerateContent?alt=sse", `{`+tools+`,"contents":[`+strings.Join(upTo, ",")+`]}`)
		want := `"name":"` + x.Parts[0].FunctionCall.Name + `"`
		if !strings.Contains(a, want) {
			t.Fatalf("before the recorded %s call the script answered %s", x.Parts[0].FunctionCall.Name, a)
		}
		calls++
	}
	if calls != 2 {
		t.Fatalf("%d recorded recall calls, want search_history and read_turns", calls)
	}
}
