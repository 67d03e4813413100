package claudecode

// This file holds the planned node the first pass builds and emit reads back: its lines, kind, links and chain.

import "github.com/ctxfold/ctxfold/transcript"

// lineRef locates one input line.
type lineRef struct {
	file int32
	line int32
	off  int64
	n    int32
}

const (
	kindUser = iota
	kindAssistant
	kindSummary
	// kindSystem is the system prompt and tool definitions of the
	// session's first api-request-shape record.
	kindSystem
	// kindAttachUser and kindAttachSystem are attachment records whose
	// rendered content reached the model, as part of a user message or as
	// a system-role message.
	kindAttachUser
	kindAttachSystem
	// kindAgentContext is the message a sub-agent's second request
	// carries from its parent session, which clients before 2.1.259 do
	// not write (agentcontext.go).
	kindAgentContext
)

// pnode is a planned node.
type pnode struct {
	id        string
	kind      uint8
	sidechain bool
	pred      int32
	caller    int32
	// first is the node's first line; more the lines merged into it (nil
	// for the usual one-line node, so it costs one pointer).
	first lineRef
	more  *[]lineRef
	// calls are the tool_use ids of an assistant node; results the call
	// ids of the tool_result blocks the store will accept (any other
	// result block is emitted as text).
	calls   []string
	results []string
	// group is the assistant node whose calls this node answers (itself
	// for an assistant node); tail, on an assistant node, the last node
	// of its results chain.
	group int32
	tail  int32
	sum   *summaryInfo
}

// role is the node's role.
func (n *pnode) role() transcript.Role {
	switch n.kind {
	case kindAssistant:
		return transcript.RoleAssistant
	case kindSummary:
		return transcript.SummaryRole
	case kindSystem, kindAttachSystem, kindAgentContext:
		return transcript.RoleSystem
	}
	return transcript.RoleUser
}

// lines returns every line of the node, first first.
func (n *pnode) lines() []lineRef {
	if n.more == nil {
		return []lineRef{n.first}
	}
	return append([]lineRef{n.first}, *n.more...)
}

// summaryInfo is what a summary node adds: the chain it covers (its last
// node's spine after the system node: first, last and how many nodes, so
// many compactions of a long session cost no memory), and the line of
// its isCompactSummary text (line 0 when none came).
type summaryInfo struct {
	last  int32
	first int32
	count int   // nodes from first to last; 0 when last is the system node
	cont  int32 // the node later turns continue from (last, or a kept message after it)
	text  lineRef
}

// chainRun is a chain of nodes: count of them, from first to last.
type chainRun struct {
	first, last int32
	count       int
}

// chainTo returns the chain that ends at last and starts after the system
// node (or at a root), as a compaction covers it. The walk stops at the
// previous boundary's last node when it meets it: later lines only ever
// give a root the system node as predecessor (planShape) or rewire the
// group they close, so the chain behind that node is still the one
// counted then, and a session that compacts K times walks each node
// once, not K times.
func (p *planner) chainTo(last int32) chainRun {
	if p.node(last).kind == kindSystem {
		return chainRun{first: last, last: last}
	}
	r := chainRun{first: last, last: last, count: 1}
	for {
		if m := p.covered; m.count > 0 && r.first == m.last {
			r.first, r.count = m.first, r.count-1+m.count
			break
		}
		pr := p.node(r.first).pred
		if pr < 0 || p.node(pr).kind == kindSystem {
			break
		}
		r.first = pr
		r.count++
	}
	p.covered = r
	return r
}

// onSpine reports whether node n is on the chain ending at last.
func (p *planner) onSpine(n, last int32) bool {
	for cur := last; cur >= 0; cur = p.node(cur).pred {
		if cur == n {
			return true
		}
	}
	return false
}
