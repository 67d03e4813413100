package render

import (
	"encoding/json"
	"testing"

	"github.com/ctxfold/ctxfold/transcript"
)

// A summary imported from a client's own compaction that the client sends
// as Chat Completions messages (OpenCode's) renders as those messages; a
// summary without them is one user message with its text.
func TestOpenAISummaryMessages(t *testing.T) {
	s := &transcript.Node{ID: "summary_s", Role: transcript.SummaryRole, Name: transcript.SummaryName,
		Content: transcript.TextContent(transcript.SummaryPrefix + "did x")}
	s.SetMeta("compaction", true)
	s.SetMeta("covers_ids", []string{"a"})
	s.SetMeta(transcript.MetaOpenAIMessages, json.RawMessage(`[{"role":"user","content":"What did we do so far?"},{"role":"assistant","content":"did x"}]`))
	got := OpenAIMessagesOf(s)
	if len(got) != 2 || got[0].Role != "user" || got[0].Content != "What did we do so far?" || got[1].Role != "assistant" || got[1].Content != "did x" {
		t.Errorf("with openai_messages: %+v", got)
	}
	delete(s.Metadata, transcript.MetaOpenAIMessages)
	if got := OpenAIMessagesOf(s); len(got) != 1 || got[0].Role != "user" || got[0].Content != transcript.SummaryPrefix+"did x" {
		t.Errorf("without: %+v", got)
	}
}
