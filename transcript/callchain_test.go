package transcript_test

import (
	"slices"
	"testing"

	"github.com/ctxfold/ctxfold/transcript"
)

// TestCallChainOpen: the calls a format may answer next are the store's
// open calls (CallsBefore, OpenCalls): those of the nearest calling node,
// less the ones answered since; none after a turn that ends the group.
func TestCallChainOpen(t *testing.T) {
	var c transcript.CallChain
	add := func(n transcript.Node) { c.Add(&n) }
	add(transcript.Node{ID: "s", Role: transcript.RoleSystem, Content: transcript.TextContent("sys")})
	add(transcript.Node{ID: "a", Predecessor: "s", Role: transcript.RoleAssistant, Content: transcript.Content{IsBlocks: true, Blocks: []transcript.Block{
		{Type: transcript.BlockToolCall, ID: "c1", Name: "f"}, {Type: transcript.BlockToolCall, ID: "c2", Name: "g"}}}})
	if got := c.Open("a"); !slices.Equal(got, []string{"c1", "c2"}) {
		t.Fatalf("after the calls: open %v", got)
	}
	add(transcript.Node{ID: "r1", Predecessor: "a", Role: transcript.RoleUser, Content: transcript.Content{IsBlocks: true, Blocks: []transcript.Block{
		{Type: transcript.BlockToolResult, ToolCallID: "c1", Text: "ok"}}}})
	if got := c.Open("r1"); !slices.Equal(got, []string{"c2"}) {
		t.Fatalf("after one result: open %v", got)
	}
	add(transcript.Node{ID: "u", Predecessor: "r1", Role: transcript.RoleUser, Content: transcript.TextContent("next")})
	if got := c.Open("u"); got != nil {
		t.Fatalf("after a user turn: open %v", got)
	}
	if got := c.Open(""); got != nil {
		t.Fatalf("at the start: open %v", got)
	}
}
