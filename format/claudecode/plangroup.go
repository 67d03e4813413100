package claudecode

// This file holds the first pass's turn grouping (the order Claude Code sends a turn's messages in) and the placement of a node: its predecessor, its caller and the tool calls it answers.

import (
	"encoding/json"

	"github.com/ctxfold/ctxfold/transcript"
)

// grouped reports whether a node takes part in turn grouping: the main
// chain, and a sub-agent file's own chain (inline sidechains interleave
// with the main chain and keep file order).
func (p *planner) grouped(sidechain bool) bool { return !sidechain || p.agentFile }

// noteRequest pairs the open group with the user message the request's
// tail ends with (before a trailing system message).
func (p *planner) noteRequest(r *record) {
	if len(p.grp) == 0 || len(p.blobs) == 0 {
		return
	}
	for k := len(r.Tail) - 1; k >= 0; k-- {
		b, ok := p.blobs[r.Tail[k]]
		if !ok || b.role == "assistant" {
			return
		}
		if b.role == "user" {
			g := p.groupOrder(p.grp)
			for _, i := range g {
				p.touch(i)
			}
			p.sent = append(p.sent, sentGroup{nodes: g, blob: b.ref})
			return
		}
	}
}

// addToGroup adds a main-chain node planned after the last assistant
// node. A group that is not one linear chain is left as it is.
func (p *planner) addToGroup(i int32) {
	n := p.node(i)
	if len(p.grp) == 0 {
		p.grpBase, p.grpBroken = n.pred, false
	} else if n.pred != p.grp[len(p.grp)-1] {
		p.grpBroken = true
	}
	p.grp = append(p.grp, i)
}

// closeGroup puts the group's nodes in the order Claude Code 2.1.3xx sends
// them: tool results first, then attachments rendered into the user
// message (they move up to just after the last assistant message or tool
// result), then the user's own lines, then the system-role attachments
// (one system message after the user message). It returns the group's new
// last node, or none for an empty group.
func (p *planner) closeGroup() int32 {
	g := p.grp
	p.grp = nil
	if len(g) == 0 {
		return none
	}
	if p.grpBroken || len(g) == 1 {
		return g[len(g)-1]
	}
	order := p.groupOrder(g)
	prev := p.grpBase
	for _, i := range order {
		if p.node(i).pred != prev {
			p.touch(i)
			p.node(i).pred = prev
		}
		prev = i
	}
	if p.head == g[len(g)-1] {
		p.head = prev
	}
	// A later line whose parent is the group's old last line continues
	// from its new last node.
	if p.moved == nil {
		p.moved = map[int32]int32{}
	}
	p.moved[g[len(g)-1]] = prev
	return prev
}

// groupOrder is the sending order of a group (see closeGroup); a broken
// group keeps its order.
func (p *planner) groupOrder(g []int32) []int32 {
	if p.grpBroken {
		return append([]int32(nil), g...)
	}
	rank := func(i int32) int {
		n := p.node(i)
		switch {
		case len(n.results) > 0:
			return 0
		case n.kind == kindAttachUser:
			return 1
		case n.kind == kindAttachSystem:
			return 3
		}
		return 2
	}
	order := make([]int32, 0, len(g))
	for r := 0; r <= 3; r++ {
		for _, i := range g {
			if rank(i) == r {
				order = append(order, i)
			}
		}
	}
	return order
}

// closeGroupAt closes the group for an assistant node whose parent
// resolved to pred, returning its predecessor after the reordering.
func (p *planner) closeGroupAt(pred int32) int32 {
	member := false
	for _, i := range p.grp {
		member = member || i == pred
	}
	last := p.closeGroup()
	if member && last != none {
		return last
	}
	return pred
}

// addCalls records the tool calls of an assistant line on its node.
func (p *planner) addCalls(n *pnode, i int32, blocks []scanBlock) {
	for _, b := range blocks {
		if b.Type != "tool_use" || b.ID == "" || contains(n.calls, b.ID) {
			continue
		}
		n.calls = append(n.calls, b.ID)
		if b.Name == "Task" || b.Name == "Agent" {
			p.toolNode[b.ID] = i
			p.lastTask = b.ID
			var in struct {
				Prompt string `json:"prompt"`
			}
			if json.Unmarshal(b.Input, &in) == nil {
				if k := promptKey(in.Prompt); k != "" {
					p.prompts[k] = b.ID
				}
			}
		}
	}
}

// learnAgentLink reads the agentId a Task result names (2.x), linking the
// sub-agent file to the call that spawned it.
func (p *planner) learnAgentLink(r *record, blocks []scanBlock) {
	if r.ToolUseResult == nil || r.ToolUseResult.AgentID == "" {
		return
	}
	tur := r.ToolUseResult
	for _, b := range blocks {
		if b.Type == "tool_result" && b.ToolUseID != "" {
			p.agentTool[tur.AgentID] = b.ToolUseID
			return
		}
	}
}

// placement decides a new node's predecessor and caller.
func (p *planner) placement(r *record, ref lineRef, text string, blocks []scanBlock, sidechain, isResult bool) (pred, caller int32, err error) {
	pred, caller = none, none
	if r.ParentUUID != "" {
		n, ok := p.resolve(r.ParentUUID)
		if !ok {
			p.warnf(ref, "parent %q not found; imported as a root", r.ParentUUID)
		}
		pred = n
	}
	if to, ok := p.moved[pred]; ok && p.grouped(sidechain) {
		pred = to
	}
	if pred >= 0 {
		// Results of one message form one chain: a result, or a turn after
		// a result, continues from the last result of its message.
		pn := p.node(pred)
		if pn.group >= 0 {
			g := p.node(pn.group)
			if isResult || (pn.group != pred && g.tail != pred) {
				pred = g.tail
			}
		}
	}
	if !sidechain {
		return pred, none, nil
	}
	switch {
	case pred >= 0 && p.node(pred).sidechain && p.node(pred).caller >= 0:
		return pred, p.node(pred).caller, nil
	case pred >= 0 && !p.node(pred).sidechain:
		// A sidechain continuing the main chain (the compaction summariser
		// reads the conversation so far): spawned by that turn.
		if p.fileCaller >= 0 {
			return pred, p.fileCaller, nil
		}
		return pred, pred, nil
	case pred >= 0:
		return pred, none, nil
	}
	// A sidechain root: find the Task/Agent call that sent its prompt.
	caller = p.fileCaller
	if caller < 0 && r.AgentID != "" {
		if tool, ok := p.agentTool[r.AgentID]; ok {
			if n, ok := p.toolNode[tool]; ok {
				caller = n
			}
		}
	}
	if caller < 0 {
		if tool, ok := p.prompts[promptKey(text)]; ok && !p.promptUsed[tool] {
			caller = p.toolNode[tool]
			p.promptUsed[tool] = true
		}
	}
	if caller < 0 && p.lastTask != "" && !p.promptUsed[p.lastTask] {
		caller = p.toolNode[p.lastTask]
		p.promptUsed[p.lastTask] = true
		p.warnf(ref, "sidechain start matched to the latest Task call by position (its prompt matches none)")
	}
	if caller < 0 && !p.warnedLink {
		p.warnedLink = true
		p.warnf(ref, "sidechain start: no Task or Agent call spawned it; imported as a separate root")
	}
	if p.agentFile && p.fileCaller < 0 && caller >= 0 {
		p.fileCaller = caller
	}
	return pred, caller, nil
}

// openCalls applies the store's tool-call model (transcript.CallsBefore):
// walking up from pred past the nodes that continue a tool group, the
// first node with calls is the one answered and its unanswered calls are
// open.
func (p *planner) openCalls(pred int32) (int32, map[string]bool) {
	owner, calls, answered, err := transcript.CallsBefore(pred, func(i int32) (transcript.ToolFacts, int32, bool) {
		if i < 0 {
			return transcript.ToolFacts{}, none, false
		}
		n := p.node(i)
		role := n.role()
		if n.kind == kindUser && len(n.results) == 0 && n.group >= 0 {
			// A message that joined a results chain (joinResults)
			// continues it, as a tool node would; the turn's order sends
			// it after the results.
			role = transcript.RoleTool
		}
		return transcript.ToolFacts{Role: role, Calls: n.calls, Results: n.results}, n.pred, true
	}, len(p.nodes))
	open := map[string]bool{}
	if err != nil || calls == nil {
		return none, open
	}
	for _, c := range transcript.OpenCalls(calls, answered) {
		open[c] = true
	}
	return owner, open
}
