package summarize

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/transcript"
)

// The code the agent wrote is listed under "Files changed", path →
// symbols, and under a budget too small for every fact it is kept before
// commands, paths and identifiers.
func TestChangesKeptWithinBudget(t *testing.T) {
	args := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	nodes := []*transcript.Node{{ID: "u1", Role: transcript.RoleUser, Content: transcript.TextContent("Add message refs to the session view.")}}
	for i := 0; i < 30; i++ {
		nodes = append(nodes, &transcript.Node{ID: fmt.Sprintf("a%d", i), Role: transcript.RoleAssistant,
			ToolCalls: []transcript.ToolCall{{ID: fmt.Sprintf("c%d", i), Name: "Bash", Arguments: args(map[string]any{"command": fmt.Sprintf("mix test test/spotter/case_%d_test.exs --seed %d", i, i)})}}})
	}
	nodes = append(nodes, &transcript.Node{ID: "e1", Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{{ID: "ce", Name: "Edit",
		Arguments: args(map[string]any{"file_path": "lib/spotter_web/live/session_live.ex", "old_string": "x",
			"new_string": "defp validate_session_message_ids(session, ids) do\n  create_message_refs(session, ids)\nend"})}}})
	const capTokens = 200
	got, err := Extractive{}.Summarize(context.Background(), Request{Nodes: nodes, MaxTokens: capTokens})
	if err != nil {
		t.Fatal(err)
	}
	want := "lib/spotter_web/live/session_live.ex → validate_session_message_ids/2, create_message_refs [e1]"
	if sec := sectionOf(got, "Files changed"); sec != "- "+want {
		t.Errorf("Files changed = %q, want %q:\n%s", sec, "- "+want, got)
	}
	if !strings.Contains(got, "did not fit") || !strings.Contains(got, "command") {
		t.Fatalf("the fixture should not fit whole:\n%s", got)
	}
	var change audit.Fact
	for _, f := range audit.Extract(nodes, nil) {
		if f.Kind == audit.KindChange {
			change = f
		}
	}
	if !audit.NewMatcher(got).Has(change) {
		t.Errorf("audit does not find the change %q kept", change.Text)
	}
	if n, _ := estimate.Text(estimate.O200kBase, got); n > capTokens {
		t.Errorf("summary %d tokens, cap %d", n, capTokens)
	}
}

// A change line of an earlier summary is read back as a change fact.
func TestChangeLineAbsorbed(t *testing.T) {
	prev := "## Objective\nx\n\n## Files changed\n- lib/a.ex → run/1 (reverted) [a1]\n"
	got, err := Extractive{}.Summarize(context.Background(), Request{Previous: prev, MaxTokens: 500})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "## Files changed\n- lib/a.ex → run/1 (reverted)") {
		t.Errorf("the earlier change is lost:\n%s", got)
	}
}
