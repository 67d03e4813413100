package render_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/ctxfold/ctxfold/render"
)

func TestGeminiFormat(t *testing.T) {
	got := rtRender(t, rtSession(t, rtRich), "", false, render.FormatGemini)
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(got)); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, got)
	}
	// Thinking is not sent; calls become functionCall parts (args always an
	// object), results functionResponse parts in user turns, {"error": …}
	// when the result failed, named after their call; consecutive turns of
	// one role merge; a later system node is "[system] …" user text.
	want := `{"systemInstruction":{"parts":[{"text":"Be brief."}]},"contents":[` +
		`{"role":"user","parts":[{"text":"List files <please>."}]},` +
		`{"role":"model","parts":[{"text":"Running two tools."},{"functionCall":{"id":"c1","name":"bash","args":{"cmd":"ls"}}},{"functionCall":{"id":"c2","name":"sql","args":{"q":"select 1"}}}]},` +
		`{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"bash","response":{"error":"a.txt\nb.txt"}}},{"functionResponse":{"id":"c2","name":"sql","response":{"output":"1"}}},{"text":"Also this image:"},{"fileData":{"mimeType":"image/png","fileUri":"https://e.x/cat.png"}},{"text":"[image/jpeg: sha256:abc]"},{"text":"[system] Mid-conversation note."}]},` +
		`{"role":"model","parts":[{"text":"Done."},{"functionCall":{"id":"c3","name":"noargs","args":{}}}]},` +
		`{"role":"user","parts":[{"functionResponse":{"id":"c3","name":"noargs","response":{"output":""}}}]}]}`
	if buf.String() != want {
		t.Fatalf("gemini:\n%s\nwant:\n%s", buf.String(), want)
	}
}

// A response an importer kept whole is sent as it was recorded.
func TestGeminiKeptResponse(t *testing.T) {
	s := rtSession(t, `{"id":"u","role":"user","content":"go"}
{"id":"a","role":"assistant","content":"","tool_calls":[{"id":"c","name":"f","arguments":{}}]}
{"id":"t","role":"tool","tool_call_id":"c","name":"f","content":"x","metadata":{"gemini_response":{"output":"x","exitCode":2}}}
`)
	got := rtRender(t, s, "", false, render.FormatGemini)
	var body render.GeminiBody
	if err := json.Unmarshal([]byte(got), &body); err != nil {
		t.Fatal(err)
	}
	r := body.Contents[2].Parts[0].FunctionResponse
	var resp bytes.Buffer
	if r == nil || json.Compact(&resp, r.Response) != nil || resp.String() != `{"output":"x","exitCode":2}` {
		t.Fatalf("response %+v", r)
	}
}
