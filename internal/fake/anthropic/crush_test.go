package anthropic

import (
	"encoding/json"
	"testing"
)

// TestScriptCrush: Crush's title request quotes the user's marker and gets
// a title; a bash marker calls Crush's bash tool with the description it
// requires.
func TestScriptCrush(t *testing.T) {
	msg := func(text string) Message {
		b, _ := json.Marshal(text)
		return Message{Role: "user", Content: b}
	}
	r := Script(Request{Messages: []Message{msg(crushTitleCue + "\n\nList. [[bash: ls -1]]\n <think>\n\n</think>")}})
	if len(r.Content) != 1 || r.Content[0].Type != "text" || r.Content[0].Text != "Fake session title" {
		t.Errorf("title reply %+v", r)
	}
	tools := []struct {
		Name string `json:"name"`
	}{{Name: "bash"}, {Name: "job_output"}}
	r = Script(Request{Tools: tools, Messages: []Message{msg("List. [[bash: ls -1]]")}})
	var args map[string]string
	if len(r.Content) != 1 || r.Content[0].Name != "bash" || json.Unmarshal(r.Content[0].Input, &args) != nil ||
		args["command"] != " ls -1" || args["description"] == "" {
		t.Errorf("bash call %+v", r)
	}
}
