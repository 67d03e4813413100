package openai

import (
	"encoding/json"
	"testing"
)

// TestCrush: Crush's summarize and title requests quote the user's text,
// markers included, and get the summary and a title; a shell marker calls
// Crush's bash tool with the description it requires.
func TestCrush(t *testing.T) {
	s := &Server{}
	if r := s.Script(CrushSummaryCue, false, nil, nil, nil); r.Text != SummaryText || len(r.Calls) != 0 {
		t.Errorf("summarize reply %+v", r)
	}
	if r := s.Script(CrushTitleCue+"\n\nList. [[shell: ls]]\n <think>\n\n</think>", false, nil, nil, nil); r.Text != CrushTitle || len(r.Calls) != 0 {
		t.Errorf("title reply %+v", r)
	}
	r := s.Script("List. [[shell: ls -1]]", false, nil, []string{"bash", "job_kill", "job_output", "view"}, nil)
	if len(r.Calls) != 1 || r.Calls[0].Name != "bash" {
		t.Fatalf("calls %+v, want one bash call", r.Calls)
	}
	var args map[string]string
	if err := json.Unmarshal([]byte(r.Calls[0].Arguments), &args); err != nil || args["command"] != "ls -1" || args["description"] == "" {
		t.Errorf("bash arguments %s", r.Calls[0].Arguments)
	}
}
