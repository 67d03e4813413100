package openai

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDroid: Droid's compaction request gets the summary in <summary> tags
// (Droid retries without them), and a shell marker calls Droid's Execute
// tool with the fields Droid requires.
func TestDroid(t *testing.T) {
	s := &Server{}
	r := s.Script("Please summarize the following conversation:\n```\n…\n```\n\n"+DroidCompactionCue, false, nil, nil, nil)
	if r.Text != "<summary>\n"+SummaryText+"\n</summary>" {
		t.Errorf("compaction reply %q", r.Text)
	}
	r = s.Script("[[shell: echo hi]]", false, nil, []string{"Read", "Execute"}, nil)
	if len(r.Calls) != 1 || r.Calls[0].Name != "Execute" {
		t.Fatalf("calls %+v, want one Execute call", r.Calls)
	}
	var args map[string]string
	if err := json.Unmarshal([]byte(r.Calls[0].Arguments), &args); err != nil || args["command"] != "echo hi" ||
		args["riskLevel"] != "low" || len(strings.Fields(args["summary"])) < 3 || args["riskLevelReason"] == "" {
		t.Errorf("Execute arguments %s", r.Calls[0].Arguments)
	}
}
