package render_test

import (
	"encoding/json"
	"testing"

	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/transcript"
)

// TestGeminiSummaryContents: a summary imported from Gemini CLI's own
// compression is sent as the contents the client sent in its place
// (metadata.gemini_contents: the snapshot, the model's acknowledgement),
// merged with its neighbours like any turn; a summary without them is
// its text as a user turn (issue 29 #10).
func TestGeminiSummaryContents(t *testing.T) {
	ctx := &transcript.Node{ID: "ctx", Role: transcript.RoleUser, Content: transcript.TextContent("<session_context>")}
	s := &transcript.Node{ID: "summary_s", Role: transcript.SummaryRole, Name: transcript.SummaryName,
		Content: transcript.TextContent(transcript.SummaryPrefix + "<state_snapshot>x</state_snapshot>")}
	s.SetMeta("compaction", true)
	s.SetMeta("covers_ids", []string{"a"})
	s.SetMeta(transcript.MetaGeminiContents, json.RawMessage(`[{"role":"user","parts":[{"text":"<state_snapshot>x</state_snapshot>"}]},{"role":"model","parts":[{"text":"Got it."}]}]`))
	next := &transcript.Node{ID: "u", Role: transcript.RoleUser, Content: transcript.TextContent("Next.")}
	got, _ := json.Marshal(render.GeminiRequest([]*transcript.Node{ctx, s, next}).Contents)
	want := `[{"role":"user","parts":[{"text":"\u003csession_context\u003e"},{"text":"\u003cstate_snapshot\u003ex\u003c/state_snapshot\u003e"}]},` +
		`{"role":"model","parts":[{"text":"Got it."}]},{"role":"user","parts":[{"text":"Next."}]}]`
	if string(got) != want {
		t.Fatalf("contents\n got %s\nwant %s", got, want)
	}
	delete(s.Metadata, transcript.MetaGeminiContents)
	got, _ = json.Marshal(render.GeminiRequest([]*transcript.Node{s}).Contents)
	if want := `[{"role":"user","parts":[{"text":"[Previous conversation summary]\n\u003cstate_snapshot\u003ex\u003c/state_snapshot\u003e"}]}]`; string(got) != want {
		t.Fatalf("without gemini_contents\n got %s\nwant %s", got, want)
	}
}
