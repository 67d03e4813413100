package openai

import (
	"strings"
	"testing"
)

// OpenCode's summarizer quotes the conversation, markers included: the
// cue wins and the answer is the summary; OpenCode's bash tool gets a
// bash call.
func TestOpenCodeScript(t *testing.T) {
	s, _ := New("")
	ask := "Here is the conversation so far:\n<conversation>\n[User]: List. [[shell: ls -1]]\n</conversation>\n\n" + OpenCodeCompactionCue + " in the <conversation> tags above"
	if r := s.Script(ask, false, nil, nil, nil); r.Text != SummaryText || len(r.Calls) != 0 {
		t.Errorf("summarizer request: %+v", r)
	}
	r := s.Script("List the files. [[shell: ls -1]]", false, nil, []string{"bash", "edit", "read"}, nil)
	if len(r.Calls) != 1 || r.Calls[0].Name != "bash" || r.Calls[0].Arguments != `{"command":"ls -1"}` {
		t.Errorf("bash call: %+v", r.Calls)
	}
	if r := s.Script("List. [[shell: ls]]", false, nil, []string{"shell"}, nil); len(r.Calls) != 1 || !strings.Contains(r.Calls[0].Name, "shell") {
		t.Errorf("a client without bash: %+v", r.Calls)
	}
}
