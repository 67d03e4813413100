package render_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/transcript"
)

// Responses rules: system nodes are developer messages; assistant text is
// output_text, then its calls as function_call items; tool nodes and
// tool_result blocks are function_call_output items; thinking is not sent.
func TestResponsesFormat(t *testing.T) {
	got := rtRender(t, rtSession(t, rtRich), "", false, render.FormatResponses)
	want := `[
{"type":"message","role":"developer","content":[{"type":"input_text","text":"Be brief."}]},
{"type":"message","role":"user","content":[{"type":"input_text","text":"List files <please>."}]},
{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Running two tools."}]},
{"type":"function_call","name":"bash","arguments":"{\"cmd\":\"ls\"}","call_id":"c1"},
{"type":"function_call","name":"sql","arguments":"{\"q\":\"select 1\"}","call_id":"c2"},
{"type":"function_call_output","call_id":"c1","output":"a.txt\nb.txt"},
{"type":"function_call_output","call_id":"c2","output":"1"},
{"type":"message","role":"user","content":[{"type":"input_text","text":"Also this image:"},{"type":"input_image","image_url":"https://e.x/cat.png"},{"type":"input_text","text":"[image/jpeg: sha256:abc]"}]},
{"type":"message","role":"developer","content":[{"type":"input_text","text":"Mid-conversation note."}]},
{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done."}]},
{"type":"function_call","name":"noargs","arguments":"{}","call_id":"c3"},
{"type":"function_call_output","call_id":"c3","output":""}
]
`
	if got != want {
		t.Fatalf("responses:\n%s\nwant:\n%s", got, want)
	}
}

// A summary imported from a client's own compaction renders as the items
// the client sent in its place; any other summary as one user message.
func TestResponsesSummary(t *testing.T) {
	const nodes = `{"id":"sys","role":"system","content":"Base."}
{"id":"u1","predecessor":"sys","role":"user","content":"Old question."}
{"id":"a1","predecessor":"u1","role":"assistant","content":"Old answer."}
{"id":"summary_x","predecessor":"sys","role":"user","name":"context/summary","content":"[Previous conversation summary]\nuser: Old question.\n\nuser: Summary.","metadata":{"compaction":true,"covers_ids":["u1","a1"],"responses_input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Old question."}]},{"type":"message","id":"m9","role":"user","content":[{"type":"input_text","text":"Summary."}]}]}}
{"id":"u2","predecessor":"a1","role":"user","content":"New."}
`
	got := rtRender(t, rtSession(t, nodes), "", false, render.FormatResponses)
	want := `[
{"type":"message","role":"developer","content":[{"type":"input_text","text":"Base."}]},
{"type":"message","role":"user","content":[{"type":"input_text","text":"Old question."}]},
{"type":"message","id":"m9","role":"user","content":[{"type":"input_text","text":"Summary."}]},
{"type":"message","role":"user","content":[{"type":"input_text","text":"New."}]}
]
`
	if got != want {
		t.Fatalf("responses:\n%s\nwant:\n%s", got, want)
	}
	// Without the items, the summary text is one user message.
	var items []render.ResponsesMessage
	if err := json.Unmarshal([]byte(rtRender(t, "../fixtures/compacted", "", false, render.FormatResponses)), &items); err != nil {
		t.Fatal(err)
	}
	if len(items) != 4 || items[1].Role != "user" || !strings.HasPrefix(items[1].Content[0].Text, transcript.SummaryPrefix) {
		t.Fatalf("fixtures/compacted: %+v", items)
	}
}

// A thinking block imported from a reasoning item goes back as one, its
// parts cut out of the text by their recorded lengths; other thinking is
// not sent.
func TestResponsesReasoning(t *testing.T) {
	const nodes = `{"id":"u1","role":"user","content":"Go."}
{"id":"a1","predecessor":"u1","role":"assistant","content":[{"type":"thinking","text":"**A**\n\nfirst\n\n**B**\n\nraw","summary_lengths":[12,5],"content_lengths":[3],"encrypted_content":"gAAA"},{"type":"thinking","text":"a Claude thought","signature":"sig"},{"type":"thinking","text":"bad lengths","summary_lengths":[99]},{"type":"text","text":"Done."}]}
`
	got := rtRender(t, rtSession(t, nodes), "", false, render.FormatResponses)
	want := `[
{"type":"message","role":"user","content":[{"type":"input_text","text":"Go."}]},
{"type":"reasoning","summary":[{"type":"summary_text","text":"**A**\n\nfirst"},{"type":"summary_text","text":"**B**"}],"content":[{"type":"reasoning_text","text":"raw"}],"encrypted_content":"gAAA"},
{"type":"reasoning","summary":[{"type":"summary_text","text":"bad lengths"}],"content":null},
{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done."}]}
]
`
	if got != want {
		t.Fatalf("responses:\n%s\nwant:\n%s", got, want)
	}
}

// A namespaced tool's call carries its namespace.
func TestResponsesNamespace(t *testing.T) {
	const nodes = `{"id":"u1","role":"user","content":"Go."}
{"id":"a1","predecessor":"u1","role":"assistant","content":"","tool_calls":[{"id":"c1","name":"spawn_agent","arguments":"{}","namespace":"multi_agent_v1"}]}
`
	got := rtRender(t, rtSession(t, nodes), "", false, render.FormatResponses)
	if !strings.Contains(got, `{"type":"function_call","name":"spawn_agent","namespace":"multi_agent_v1","arguments":"{}","call_id":"c1"}`) {
		t.Fatalf("responses:\n%s", got)
	}
}

// A custom (freeform) call goes back as custom_tool_call with its raw
// input, and its output as custom_tool_call_output.
func TestResponsesCustomCall(t *testing.T) {
	const nodes = `{"id":"u1","role":"user","content":"Patch."}
{"id":"a1","predecessor":"u1","role":"assistant","content":"","tool_calls":[{"id":"c1","name":"apply_patch","arguments":"*** Begin Patch\n*** End Patch\n","custom":true},{"id":"c2","name":"shell","arguments":{"cmd":"ls"}}]}
{"id":"t1","predecessor":"a1","role":"tool","tool_call_id":"c1","content":"Success."}
{"id":"t2","predecessor":"t1","role":"tool","tool_call_id":"c2","content":"a.txt"}
`
	got := rtRender(t, rtSession(t, nodes), "", false, render.FormatResponses)
	want := `[
{"type":"message","role":"user","content":[{"type":"input_text","text":"Patch."}]},
{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch\n*** End Patch\n","call_id":"c1"},
{"type":"function_call","name":"shell","arguments":"{\"cmd\":\"ls\"}","call_id":"c2"},
{"type":"custom_tool_call_output","call_id":"c1","output":"Success."},
{"type":"function_call_output","call_id":"c2","output":"a.txt"}
]
`
	if got != want {
		t.Fatalf("responses:\n%s\nwant:\n%s", got, want)
	}
}
