package cmd

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// man/ctxfold-format.5 is hand-written; this keeps it in step with the
// code: every field the store writes, every block type and the summary
// shape constants must appear in it.
func TestFormatManPageMatchesTheCode(t *testing.T) {
	b, err := os.ReadFile("../man/ctxfold-format.5")
	if err != nil {
		t.Fatal(err)
	}
	// roff escapes dashes; compare against the text a reader sees.
	page := strings.ReplaceAll(string(b), `\-`, "-")
	want := []string{store.MetaFile, store.NodesFile, store.EventsFile, store.LockFile, store.LostFound,
		transcript.BlockText, transcript.BlockThinking, transcript.BlockImage, transcript.BlockToolCall, transcript.BlockToolResult,
		strings.TrimSuffix(transcript.SummaryPrefix, "\n"), transcript.SummaryName, transcript.SummaryIDPrefix, string(transcript.SummaryRole),
		"compaction", transcript.MetaCoversIDs, transcript.MetaCoversSpan}
	for _, r := range []transcript.Role{transcript.RoleSystem, transcript.RoleUser, transcript.RoleAssistant, transcript.RoleTool} {
		want = append(want, string(r))
	}
	n := int64(1)
	fullNode := transcript.Node{ID: "x", Predecessor: "p", Role: transcript.RoleAssistant, Content: transcript.TextContent("c"),
		ToolCalls: []transcript.ToolCall{{ID: "c1", Name: "n", Arguments: json.RawMessage(`{}`)}}, ToolCallID: "c0", Name: "n",
		Caller: "k", CreatedAt: "2026-01-01T00:00:00Z", Usage: &transcript.Usage{InputTokens: 1, OutputTokens: 1, CachedInputTokens: 1},
		Metadata: map[string]json.RawMessage{"m": json.RawMessage(`1`)}}
	fullMeta := store.Meta{FormatVersion: 1, Head: "h", ActiveSummaryID: "s", ActiveSummaryText: "t", Model: "m", CreatedAt: "c", NodesBytes: &n}
	for _, v := range []any{fullNode, fullMeta, *fullNode.Usage, fullNode.ToolCalls[0]} {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		json.Unmarshal(raw, &obj)
		for k := range obj {
			want = append(want, k)
		}
	}
	for _, w := range want {
		if !strings.Contains(page, w) {
			t.Errorf("man/ctxfold-format.5 does not mention %q", w)
		}
	}
}
