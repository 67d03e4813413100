package claudecode

// This file plans the lines that are not user or assistant messages: attachments, api-request-shape records and compactions.

import (
	"fmt"

	"github.com/ctxfold/ctxfold/transcript"
)

// planAttachment plans an attachment whose rendered content reached the
// model: renderedRole "system" is a system-role message of its own, any
// other is text of the user message it joins.
func (p *planner) planAttachment(r *record, ref lineRef) error {
	if r.UUID == "" {
		p.skip(r)
		return nil
	}
	sidechain := r.IsSidechain || p.agentFile
	pred, caller, err := p.placement(r, ref, "", nil, sidechain, false)
	if err != nil {
		return err
	}
	kind := uint8(kindAttachUser)
	if r.RenderedRole == "system" || !hasRendered(r.Rendered) && r.Attachment.system {
		kind = kindAttachSystem
	}
	n := &pnode{id: p.nodeID(r.UUID), kind: kind, sidechain: sidechain,
		pred: pred, caller: caller, first: ref, group: none, tail: none}
	i := p.add(n)
	p.uuidNode.put(p.key(r.UUID), i)
	if !sidechain {
		p.head = i
	}
	if p.grouped(sidechain) {
		p.addToGroup(i)
	}
	p.sink.Count("attachment", transcript.OutcomeImported, "")
	return nil
}

// planShape makes the session's first api-request-shape (the system
// prompt and tool definitions Claude Code sent) the system node every main
// chain starts from.
func (p *planner) planShape(r *record, ref lineRef) error {
	if p.agentFile {
		return p.planAgentShape(r, ref)
	}
	id := p.freshID("claude-code-system")
	n := &pnode{id: id, kind: kindSystem, pred: none, caller: none, first: ref, group: none, tail: none}
	p.sys = p.add(n)
	// Every main root now starts from the system node, and so does a
	// summary covering a chain from such a root (its predecessor is its
	// first covered node's): a shape recorded after a compaction, as in a
	// session resumed from 'ctxfold export', must not split the two.
	for i := range p.sys {
		if m := p.node(i); m.pred == none && !m.sidechain {
			p.touch(i)
			m.pred = p.sys
		}
	}
	if len(p.grp) > 0 && p.node(p.grp[0]).pred == p.sys {
		p.grpBase = p.sys
	}
	p.sink.Count(recordName(r), transcript.OutcomeImported, "system prompt and tool definitions (the system node)")
	return nil
}

// planAgentShape makes a sub-agent file's first shape the system node its
// chain starts from, in the sub-agent's caller subtree: a sub-agent's
// request carries its own system prompt and tools.
func (p *planner) planAgentShape(r *record, ref lineRef) error {
	var roots []int32
	for i := range int32(len(p.nodes)) {
		if m := p.node(i); m.first.file == p.fileIdx && m.pred == none && m.sidechain && m.kind != kindSummary {
			roots = append(roots, int32(i))
		}
	}
	if len(roots) != 1 || p.node(roots[0]).caller == none {
		p.sink.Count(recordName(r), transcript.OutcomeSkipped, "sub-agent request shape without one spawned root")
		return nil
	}
	root := roots[0]
	id := p.freshID("claude-code-system-" + Sanitize(p.node(root).id))
	n := &pnode{id: id, kind: kindSystem, sidechain: true, pred: none, caller: p.node(root).caller,
		first: ref, group: none, tail: none}
	p.fileSys = p.add(n)
	p.touch(root)
	p.node(root).pred = p.fileSys
	if len(p.grp) > 0 && p.grp[0] == root {
		p.grpBase = p.fileSys
	}
	p.sink.Count(recordName(r), transcript.OutcomeImported, "sub-agent system prompt and tool definitions")
	return nil
}

// planBoundary turns a compact_boundary into a summary node covering the
// chain that ends at its logical parent (docs/FORMAT.md §4: predecessor = the
// predecessor of the first covered node). Later turns continue from that
// last covered node, so the covered run stays on their spine.
func (p *planner) planBoundary(r *record, ref lineRef) error {
	p.closeGroup()
	last := none
	if r.LogicalParentUUID != "" {
		if n, ok := p.resolve(r.LogicalParentUUID); ok {
			last = n
		}
	}
	if last < 0 && r.LogicalParentUUID != "" {
		p.warnf(ref, "compaction boundary: logicalParentUuid %q not found; covering the chain before it", r.LogicalParentUUID)
	}
	if last >= 0 && p.node(last).sidechain {
		last = none
	}
	if last < 0 {
		last = p.head
	}
	if r.UUID != "" {
		if last >= 0 {
			p.uuidNode.put(p.key(r.UUID), last) // the continuation; see cont below
		} else {
			p.skipParent.put(p.key(r.UUID), 0)
		}
	}
	if last < 0 {
		p.sink.Count(recordName(r), transcript.OutcomeSkipped, "compaction boundary with nothing before it")
		return nil
	}
	// The turns after the boundary continue from its logical parent; the
	// summary covers the chain up to the first message Claude Code kept
	// verbatim (compactMetadata.preservedMessages), so a render shows those
	// after the summary, as the client's next request does.
	cont := last
	if cm := r.CompactMetadata; cm != nil && cm.PreservedMessages != nil && len(cm.PreservedMessages.UUIDs) > 0 {
		if f, ok := p.resolve(cm.PreservedMessages.UUIDs[0]); ok && f >= 0 && p.onSpine(f, last) {
			if pr := p.node(f).pred; pr >= 0 && p.node(pr).kind != kindSystem {
				last = pr
			} else {
				p.warnf(ref, "compaction boundary keeps every message; imported as covering the chain before it")
			}
		}
	}
	run := p.chainTo(last)
	first := run.first
	id := transcript.SummaryIDPrefix + Sanitize(r.UUID)
	if r.UUID == "" {
		id = transcript.SummaryIDPrefix + fmt.Sprintf("line%d", ref.line)
	}
	id = p.freshID(id)
	s := &pnode{id: id, kind: kindSummary, pred: p.node(first).pred,
		caller: none, first: ref, sum: &summaryInfo{last: last, first: first, count: run.count, cont: cont}, group: none, tail: none}
	i := p.add(s)
	p.lastBound = i
	if r.UUID != "" {
		p.boundaries[r.UUID] = i
	}
	p.sink.Count(recordName(r), transcript.OutcomeImported, "")
	return nil
}

// planCompactSummary gives the summary node its text; the line itself
// stands for the last covered node, so the turns after it continue there.
func (p *planner) planCompactSummary(r *record, body []byte, ref lineRef) error {
	s, ok := p.boundaries[r.ParentUUID]
	if !ok && p.lastBound >= 0 && p.node(p.lastBound).sum.text.line == 0 {
		s, ok = p.lastBound, true
	}
	if !ok {
		p.warnf(ref, "compaction summary without a compact_boundary; imported as a user turn")
		return p.planMessage(&record{Type: r.Type, UUID: r.UUID, ParentUUID: r.ParentUUID, IsSidechain: r.IsSidechain,
			Message: r.Message, ToolUseResult: r.ToolUseResult}, ref)
	}
	n := p.node(s)
	p.touch(s)
	n.sum.text = ref
	last := n.sum.cont
	p.uuidNode.put(p.key(r.UUID), last)
	p.head = last
	p.sink.Count("user", transcript.OutcomeMerged, "compaction summary text (into the summary node)")
	return nil
}
