package render

import (
	"strings"

	"github.com/ctxfold/ctxfold/transcript"
)

// Classifier says where node i of v's graph stands relative to the view,
// exactly as Search's hits do (HitVisible, HitCovered, HitOffBranch,
// HitRelic): for hits found elsewhere, such as the archive's full-text
// index, which must not decide this itself.
func Classifier(v *View) func(i int) string {
	st := newSearchState(v)
	return func(i int) string { return st.hit(i, "", "").Status }
}

// SearchText is the text Search looks through in a node, one field after
// another, newline-separated: content, thinking, tool results and tool
// calls (name and arguments); never ids, timestamps or metadata.
func SearchText(n *transcript.Node) string {
	var parts []string
	if !n.Content.IsBlocks && n.Content.Text != "" {
		parts = append(parts, n.Content.Text)
	}
	for _, b := range n.Content.Blocks {
		switch b.Type {
		case transcript.BlockText, transcript.BlockThinking, transcript.BlockToolResult:
			parts = append(parts, b.Text)
		case transcript.BlockToolCall:
			parts = append(parts, b.Name+" "+transcript.ArgumentsText(b.Arguments))
		}
	}
	for _, c := range n.ToolCalls {
		parts = append(parts, c.Name+" "+c.ArgumentsText())
	}
	return strings.Join(parts, "\n")
}
