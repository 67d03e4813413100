package timeline

import (
	"sort"
	"strings"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/transcript"
)

// snippetRunes bounds a largest node's snippet.
const snippetRunes = 140

// maxCallSearch bounds how many assistant nodes before a tool result are
// read to find its call.
const maxCallSearch = 16

// addLargest lists the n largest nodes of the view (estimate's per-node
// counts), with the tool each one calls or answers.
func (d *Data) addLargest(g *dag.Graph, nodes []estimate.NodeCount, n int) error {
	top := append([]estimate.NodeCount(nil), nodes...)
	sort.SliceStable(top, func(a, b int) bool { return top[a].Tokens > top[b].Tokens })
	top = top[:min(n, len(top))]
	d.Largest = []LargeNode{}
	for _, nc := range top {
		ln := LargeNode{ID: nc.ID, Role: nc.Role, Category: nc.Category, Tokens: nc.Tokens}
		if i, ok := g.Lookup(nc.ID); ok {
			node, err := g.S.Node(i)
			if err != nil {
				return err
			}
			ln.Tool = toolOf(g, i, node)
			ln.Snippet = snippet(node)
		}
		d.Largest = append(d.Largest, ln)
	}
	return nil
}

// toolOf is the tool a node calls (its first call) or answers (the call
// of its predecessor that its result names); "" for none.
func toolOf(g *dag.Graph, i int, n *transcript.Node) string {
	if name := firstCall(n, ""); name != "" {
		return name
	}
	var callID string
	switch {
	case n.ToolCallID != "":
		callID = n.ToolCallID
	default:
		for _, b := range n.Content.Blocks {
			if b.ToolCallID != "" {
				callID = b.ToolCallID
				break
			}
		}
	}
	if callID == "" {
		return ""
	}
	// The call is in one of the assistant nodes just before (a client may
	// write each call of a reply on its own line).
	for p, seen := g.Pred(i), 0; p >= 0 && seen < maxCallSearch; p = g.Pred(p) {
		if g.S.RoleAt(p) != transcript.RoleAssistant {
			continue
		}
		seen++
		pn, err := g.S.Node(p)
		if err != nil {
			return n.Name
		}
		if name := firstCall(pn, callID); name != "" {
			return name
		}
	}
	return n.Name
}

// snippet is the start of a node's text, control characters removed.
func snippet(n *transcript.Node) string {
	t := n.Content.PlainText()
	if t == "" {
		for _, b := range n.Content.Blocks {
			if b.Text != "" {
				t = b.Text
				break
			}
		}
	}
	if t == "" && len(n.ToolCalls) > 0 {
		t = string(n.ToolCalls[0].Arguments)
	}
	t = strings.Join(strings.Fields(render.TextSafe(t)), " ")
	if r := []rune(t); len(r) > snippetRunes {
		t = string(r[:snippetRunes]) + "…"
	}
	return t
}

// firstCall is the name of n's call with id (any call when id is ""),
// whether the node keeps its calls apart or as tool_call blocks.
func firstCall(n *transcript.Node, id string) string {
	for _, c := range n.ToolCalls {
		if id == "" || c.ID == id {
			return c.Name
		}
	}
	for _, b := range n.Content.Blocks {
		if b.Type == "tool_call" && b.Name != "" && (id == "" || b.ID == id) {
			return b.Name
		}
	}
	return ""
}
