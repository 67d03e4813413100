// The append rules Append checks each node against before anything is
// written, so that a refused batch leaves the session byte-identical.

package store

import (
	"fmt"
	"strings"

	"github.com/ctxfold/ctxfold/transcript"
)

// validate applies the append rules to n against the snapshot plus the
// batch written so far. pos is n's 1-based batch position (0 for one node).
func (tx *Tx) validate(n *transcript.Node, batch map[string]*transcript.Node, pos int, opts AppendOptions) error {
	fail := func(format string, args ...any) error {
		return &ValidationError{Index: pos, NodeID: n.ID, Msg: fmt.Sprintf(format, args...)}
	}
	if i := strings.IndexAny(n.ID, "\n\r"); i >= 0 {
		// An id is printed one per line (render --format ids, graph):
		// a line break in it would split the output. (Other control
		// characters are escaped where an id is printed.)
		return fail("the id holds a line break (%q at byte %d); ids are printed one per line", n.ID[i:i+1], i)
	}
	if err := tx.validateLinks(n, batch, fail); err != nil {
		return err
	}
	if n.IsSummary() {
		return tx.validateSummary(n, batch, fail)
	}
	if strings.HasPrefix(n.ID, transcript.SummaryIDPrefix) {
		return fail("ids starting %q are reserved for summary nodes (metadata.compaction: true)", transcript.SummaryIDPrefix)
	}
	for _, c := range n.AllToolCalls() {
		if c.ID == "" {
			return fail("a tool call has no id")
		}
		if n.Role != transcript.RoleAssistant {
			return fail("only assistant nodes make tool calls (role is %s)", n.Role)
		}
	}
	if n.Role == transcript.RoleTool && n.ToolCallID == "" {
		return fail("a tool node needs tool_call_id")
	}
	if n.Role != transcript.RoleTool && n.ToolCallID != "" {
		// It would be silently ignored: results on other roles are
		// tool_result blocks.
		return fail("only tool nodes carry tool_call_id (role is %s); use a tool_result block", n.Role)
	}
	results := n.ToolResults()
	if len(results) > 0 {
		left, err := tx.checkOpenCalls(n, results, batch)
		if err != nil {
			return fail("%v", err)
		}
		if len(left) > 0 && len(n.AllToolCalls()) > 0 && n.Caller == "" && !opts.AsRecorded {
			// A node that answers some calls and makes new ones ends the
			// group: the calls it leaves open are never answered.
			return fail("tool call(s) %s have no result yet: a node that makes tool calls must answer every call still open before it", quoteList(left))
		}
	} else if n.Caller == "" && !opts.AsRecorded {
		// A spawned turn (caller set) runs inside its caller's open call,
		// which is answered on the caller's branch: it is exempt.
		if err := tx.checkAnswered(n, batch); err != nil {
			return fail("%v", err)
		}
	}
	return nil
}

// validateLinks checks n's role, that its id is new, and that the nodes it
// points at exist and are real turns: the rules every node obeys, summary or
// not.
func (tx *Tx) validateLinks(n *transcript.Node, batch map[string]*transcript.Node, fail func(string, ...any) error) error {
	s := tx.s
	if !n.Role.Valid() {
		return fail("role must be system, user, assistant or tool, got %q", n.Role)
	}
	if _, dup := s.Lookup(n.ID); dup {
		return fail("duplicate id: the session already has a node %q", n.ID)
	}
	if _, dup := batch[n.ID]; dup {
		return fail("duplicate id: the batch holds %q twice", n.ID)
	}
	exists := func(id string) bool {
		_, a := s.Lookup(id)
		_, b := batch[id]
		return a || b
	}
	if n.Predecessor != "" && !exists(n.Predecessor) {
		return fail("predecessor %q not found", n.Predecessor)
	}
	if n.Caller != "" && !exists(n.Caller) {
		return fail("caller %q not found", n.Caller)
	}
	// docs/FORMAT.md §4: a summary is a stand-in spliced beside the chain; turns keep
	// following real turns (the kept tail keeps its predecessors), so no
	// node may follow or be spawned by a summary.
	isSummary := func(id string) bool {
		if bn, ok := batch[id]; ok {
			return bn.IsSummary()
		}
		i, ok := s.Lookup(id)
		return ok && s.IsSummary(i)
	}
	if n.Predecessor != "" && isSummary(n.Predecessor) {
		return fail("predecessor %q is a summary node; a turn follows a real turn (docs/FORMAT.md §4)", n.Predecessor)
	}
	if n.Caller != "" && isSummary(n.Caller) {
		return fail("caller %q is a summary node", n.Caller)
	}
	return nil
}

// checkOpenCalls: every tool result must answer a call of the nearest
// node up the predecessor chain that makes calls and is still unanswered
// there (the tool-call model, transcript/tools.go).
// It returns the calls still open after n's results, in call order.
func (tx *Tx) checkOpenCalls(n *transcript.Node, results []transcript.ToolResult, batch map[string]*transcript.Node) ([]string, error) {
	_, calls, answered, err := tx.callsBefore(n.Predecessor, batch)
	if err != nil {
		return nil, err
	}
	if calls == nil {
		return nil, fmt.Errorf("tool result for %q has no matching open tool call", results[0].ToolCallID)
	}
	open := map[string]bool{}
	for _, c := range transcript.OpenCalls(calls, answered) {
		open[c] = true
	}
	for _, r := range results {
		if !open[r.ToolCallID] {
			if answered[r.ToolCallID] {
				return nil, fmt.Errorf("tool call %q already has a result", r.ToolCallID)
			}
			return nil, fmt.Errorf("tool result for %q has no matching open tool call (the open calls are %s)", r.ToolCallID, quoteList(keys(open)))
		}
		delete(open, r.ToolCallID)
	}
	var left []string
	for _, c := range calls {
		if open[c] {
			left = append(left, c)
		}
	}
	return left, nil
}

// checkAnswered: a turn that carries no results may not follow a node
// whose tool calls are still unanswered on this chain; every provider
// rejects such a request and verify reports tool_call_unanswered.
func (tx *Tx) checkAnswered(n *transcript.Node, batch map[string]*transcript.Node) error {
	owner, calls, answered, err := tx.callsBefore(n.Predecessor, batch)
	if err != nil {
		return err
	}
	open := transcript.OpenCalls(calls, answered)
	if len(open) == 0 {
		return nil
	}
	return fmt.Errorf("tool call(s) %s of %q have no result yet: append their results (role tool with tool_call_id, or tool_result blocks) before the next %s turn", quoteList(open), owner, n.Role)
}

// callsBefore is CallsBefore over the batch and the committed index.
func (tx *Tx) callsBefore(id string, batch map[string]*transcript.Node) (owner string, calls []string, answered map[string]bool, err error) {
	return transcript.CallsBefore(id, func(id string) (transcript.ToolFacts, string, bool) {
		if id == "" {
			return transcript.ToolFacts{}, "", false
		}
		if bn, ok := batch[id]; ok {
			return bn.ToolFacts(), bn.Predecessor, true
		}
		if ref, ok := tx.s.RefByID(id); ok {
			return ref.ToolFacts(), ref.Predecessor, true
		}
		return transcript.ToolFacts{}, "", false
	}, 1_000_000)
}

// validateSummary applies docs/FORMAT.md §4 to a summary node.
func (tx *Tx) validateSummary(n *transcript.Node, batch map[string]*transcript.Node, fail func(string, ...any) error) error {
	if !strings.HasPrefix(n.ID, transcript.SummaryIDPrefix) {
		return fail("a summary node's id must start with %q", transcript.SummaryIDPrefix)
	}
	if n.Role != transcript.SummaryRole {
		return fail("a summary node has role %q, got %q", transcript.SummaryRole, n.Role)
	}
	if n.Name != transcript.SummaryName {
		return fail("a summary node is named %q, got %q", transcript.SummaryName, n.Name)
	}
	if !strings.HasPrefix(n.Content.PlainText(), transcript.SummaryPrefix) {
		return fail(`a summary's content must begin "%s\n"`, strings.TrimSuffix(transcript.SummaryPrefix, "\n"))
	}
	if n.Caller != "" {
		return fail("a summary node has no caller")
	}
	if len(n.AllToolCalls()) > 0 || len(n.ToolResults()) > 0 || n.ToolCallID != "" {
		return fail("a summary node carries no tool calls or results")
	}
	_, hasList := n.Metadata[transcript.MetaCoversIDs]
	if _, hasSpan := n.Metadata[transcript.MetaCoversSpan]; hasSpan {
		if hasList {
			return fail("a summary carries covers_ids or covers_span, not both")
		}
		sp, ok := n.CoversSpan()
		if !ok {
			return fail(`metadata.covers_span must be {"first": ID, "last": ID, "count": N} with N ≥ 1`)
		}
		return tx.walkCoverage(n, sp, nil, batch, fail)
	}
	covers := n.CoversIDs()
	if hasList && covers == nil {
		return fail("metadata.covers_ids must be an array of ids")
	}
	if len(covers) == 0 {
		return fail("metadata.covers_ids is empty")
	}
	sp := transcript.SpanOf(covers)
	if err := tx.walkCoverage(n, sp, covers, batch, fail); err != nil {
		if lerr := tx.checkCoverList(n, covers, batch, fail); lerr != nil {
			return lerr // the list's own first fault, named by its position
		}
		return err
	}
	// docs/FORMAT.md §4: the list is stored as its span, O(1) bytes
	// whatever the segment's length (a re-compaction's list repeats every
	// id the previous one covered).
	n.WithCoverSpan(sp)
	return nil
}

// walkCoverage checks that sp is a contiguous chain of real turns: from
// sp.Last, sp.Count nodes back along predecessor links (through the batch,
// then the index) to sp.First, spliced at n's predecessor. ids, when not
// nil, is the list the chain must spell. O(sp.Count), with no allocation:
// the index part of the walk follows record links. A span that extends
// the last one this transaction committed stops where that one ended:
// O(the new turns).
func (tx *Tx) walkCoverage(n *transcript.Node, sp transcript.CoverSpan, ids []string, batch map[string]*transcript.Node, fail func(string, ...any) error) error {
	s := tx.s
	id, idx := sp.Last, -1
	for k := sp.Count - 1; k >= 0; k-- {
		pred := ""
		if idx < 0 {
			if bn, ok := batch[id]; ok {
				if bn.IsSummary() {
					return fail("covers %q, a summary; coverage names real turns only", id)
				}
				pred = bn.Predecessor
			} else if idx, ok = s.Lookup(id); !ok {
				return fail("covers %q, which is not found", id)
			}
		}
		if idx >= 0 {
			if id = s.ID(idx); s.IsSummary(idx) {
				return fail("covers %q, a summary; coverage names real turns only", id)
			}
		}
		if ids != nil && ids[k] != id {
			return fail("covers_ids is not a contiguous chain: %q does not follow %q", ids[k+1], ids[k])
		}
		if m := tx.covered; ids == nil && k+1 == m.span.Count && id == m.span.Last && sp.First == m.span.First {
			// The rest of the chain is m's, checked when it was appended.
			if n.Predecessor != m.pred {
				return fail("predecessor must be the predecessor of the first covered node (%s), got %s", quoteOrNull(m.pred), quoteOrNull(n.Predecessor))
			}
			return nil
		}
		if k == 0 {
			if id != sp.First {
				return fail("covers_span: %d nodes back from %q is %q, not %q", sp.Count, sp.Last, id, sp.First)
			}
			if idx >= 0 {
				pred = s.Ref(idx).Predecessor
			}
			if n.Predecessor != pred {
				return fail("predecessor must be the predecessor of the first covered node (%s), got %s", quoteOrNull(pred), quoteOrNull(n.Predecessor))
			}
			return nil
		}
		if idx >= 0 {
			if idx = s.PredIndex(idx); idx < 0 {
				return fail("covers_span: the chain from %q ends %d nodes short of its count %d", sp.Last, k, sp.Count)
			}
		} else if id = pred; id == "" {
			return fail("covers_span: the chain from %q ends %d nodes short of its count %d", sp.Last, k, sp.Count)
		}
	}
	return nil
}

// checkCoverList is format version 1's check of a covers_ids list, in list
// order, which names the first offending position; Append runs it only to
// explain a list the walk refused.
func (tx *Tx) checkCoverList(n *transcript.Node, covers []string, batch map[string]*transcript.Node, fail func(string, ...any) error) error {
	type info struct {
		pred    string
		summary bool
	}
	lookup := func(id string) (info, bool) {
		if bn, ok := batch[id]; ok {
			return info{bn.Predecessor, bn.IsSummary()}, true
		}
		if ref, ok := tx.s.RefByID(id); ok {
			return info{ref.Predecessor, ref.Summary}, true
		}
		return info{}, false
	}
	seen := map[string]bool{}
	for i, id := range covers {
		in, ok := lookup(id)
		if !ok {
			return fail("covers_ids[%d] %q not found", i, id)
		}
		if in.summary {
			return fail("covers_ids[%d] %q is a summary; coverage names real turns only", i, id)
		}
		if seen[id] {
			return fail("covers_ids names %q twice", id)
		}
		seen[id] = true
		if i == 0 {
			if n.Predecessor != in.pred {
				return fail("predecessor must be the predecessor of the first covered node (%s), got %s", quoteOrNull(in.pred), quoteOrNull(n.Predecessor))
			}
		} else if in.pred != covers[i-1] {
			return fail("covers_ids is not a contiguous chain: %q does not follow %q", id, covers[i-1])
		}
	}
	return nil
}
