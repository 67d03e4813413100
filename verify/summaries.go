package verify

import (
	"slices"
	"strconv"
	"strings"

	"github.com/ctxfold/ctxfold/transcript"
)

// checkSummaries applies docs/FORMAT.md §4 to every summary node, active or
// relic: its shape, and that covers_ids is a contiguous chain segment of
// real turns spliced at its predecessor that keeps tool calls with their
// results. Then the session-wide rules: one active summary that is the
// latest, and a later summary on the same chain extends the earlier one.
func (c *checker) checkSummaries() error {
	s, g := c.s, c.g
	// stamp[j] == k+1 while checking the k-th summary: j is covered by it.
	stamp := make([]int32, g.Len())
	for i := range s.Len() {
		if i&0xffff == 0 {
			if err := c.ctx.Err(); err != nil {
				return err
			}
		}
		r := s.Ref(i)
		if !r.Summary {
			if strings.HasPrefix(r.ID, transcript.SummaryIDPrefix) || r.Name == transcript.SummaryName {
				c.errAt(Summaries, CodeSummaryUnflagged, i, "looks like a summary (id prefix %q or name %q) but metadata.compaction is not true: it is read as a raw turn and never substitutes",
					transcript.SummaryIDPrefix, transcript.SummaryName)
			}
			continue
		}
		c.res.Summaries++
		seg := &segment{summary: i}
		c.segs = append(c.segs, seg)
		if i == g.ActiveSummary() {
			c.active = seg
		}
		n, err := s.Node(i)
		if err != nil {
			return err
		}
		if seg == c.active {
			c.activeNode = n
		}
		c.checkShape(i, n)
		c.checkCoverage(seg, n, stamp, int32(len(c.segs)))
	}
	c.checkActive()
	c.checkExtension()
	c.checkToolSplits()
	return nil
}

// checkShape: docs/FORMAT.md §4's fixed fields of a summary node.
func (c *checker) checkShape(i int, n *transcript.Node) {
	var bad []string
	if !strings.HasPrefix(n.ID, transcript.SummaryIDPrefix) {
		bad = append(bad, "id must start with "+quote(transcript.SummaryIDPrefix))
	}
	if n.Name != transcript.SummaryName {
		bad = append(bad, "name must be "+quote(transcript.SummaryName)+", got "+quote(n.Name))
	}
	if n.Role != transcript.SummaryRole {
		bad = append(bad, "role must be "+quote(string(transcript.SummaryRole))+", got "+quote(string(n.Role)))
	}
	if n.Caller != "" {
		bad = append(bad, "a summary has no caller")
	}
	if len(n.AllToolCalls()) > 0 || len(n.ToolResults()) > 0 {
		bad = append(bad, "a summary carries no tool calls or results")
	}
	if len(bad) > 0 {
		c.errAt(Summaries, CodeSummaryShape, i, "%s", strings.Join(bad, "; "))
	}
	if !strings.HasPrefix(n.Content.PlainText(), transcript.SummaryPrefix) {
		c.errAt(Summaries, CodeSummaryContentPrefix, i, "content must begin with %q", transcript.SummaryPrefix)
	}
}

// checkCoverage: covers_ids names existing real turns forming one
// contiguous predecessor chain (a covers_span walks back to its first
// node), and the summary sits at its splice point.
func (c *checker) checkCoverage(seg *segment, n *transcript.Node, stamp []int32, tag int32) {
	s, i := c.s, seg.summary
	ref := s.Ref(i)
	var idx []int
	var ok bool
	if _, span := n.Metadata[transcript.MetaCoversSpan]; span {
		idx, ok = c.spanCoverage(i, ref.CoversSpan)
	} else {
		idx, ok = c.listCoverage(i, n, ref.CoversIDs, stamp, tag)
	}
	if !ok {
		return
	}
	seg.first, seg.last, seg.n, seg.contiguous = idx[0], idx[len(idx)-1], len(idx), true
	if seg == c.active {
		// Only the active segment is kept whole (checkRendering); the
		// others are walked again from their last node where needed, so
		// verify's memory is bounded by the chain, not summaries × chain.
		seg.covered = idx
	}
	if want, got := s.Ref(idx[0]).Predecessor, ref.Predecessor; want != got {
		c.errAt(Summaries, CodeSpliceMismatch, i, "predecessor is %s but the first covered node %q follows %s: a summary sits at its segment's splice point",
			quoteOrNull(got), s.ID(idx[0]), quoteOrNull(want))
	}
}

// spanCoverage resolves a covers_span (format version 2): Count nodes back
// from Last along predecessor links, real turns only, ending at First.
func (c *checker) spanCoverage(i int, sp transcript.CoverSpan) ([]int, bool) {
	s, g := c.s, c.g
	if s.Ref(i).CoversIDs != nil {
		c.errAt(Summaries, CodeCoversNotContiguous, i, "carries both covers_ids and covers_span: a summary records its coverage one way (docs/FORMAT.md §4)")
		return nil, false
	}
	if !sp.Valid() {
		c.errAt(Summaries, CodeCoversEmpty, i, `metadata.covers_span is not {"first": ID, "last": ID, "count": N ≥ 1}: a summary records the turns it replaces`)
		return nil, false
	}
	for _, id := range []string{sp.First, sp.Last} {
		if _, ok := s.Lookup(id); !ok {
			c.errAt(Summaries, CodeCoversMissing, i, "covers_span names %q, which does not exist", id)
			return nil, false
		}
	}
	last, _ := s.Lookup(sp.Last)
	if d := g.Depth(last); d >= 0 && d < sp.Count-1 {
		c.errAt(Summaries, CodeCoversNotContiguous, i, "covers_span counts %d nodes back from %q, but its chain holds %d", sp.Count, sp.Last, d+1)
		return nil, false
	}
	idx := make([]int, sp.Count)
	x := last
	for k := sp.Count - 1; k >= 0; k-- {
		if x < 0 {
			c.errAt(Summaries, CodeCoversNotContiguous, i, "covers_span: the chain from %q breaks %d nodes before its count %d", sp.Last, k+1, sp.Count)
			return nil, false
		}
		if s.IsSummary(x) {
			c.errAt(Summaries, CodeCoversSummary, i, "covers_span's chain holds %q, a summary; coverage names real turns only (docs/FORMAT.md §4)", g.ID(x))
			return nil, false
		}
		idx[k] = x
		x = g.Pred(x)
	}
	if first := g.ID(idx[0]); first != sp.First {
		c.errAt(Summaries, CodeCoversNotContiguous, i, "covers_span: %d nodes back from %q is %q, not its first %q", sp.Count, sp.Last, first, sp.First)
		return nil, false
	}
	return idx, true
}

// listCoverage resolves a covers_ids list (format version 1), id by id.
func (c *checker) listCoverage(i int, n *transcript.Node, ids []string, stamp []int32, tag int32) ([]int, bool) {
	s, g := c.s, c.g
	if len(ids) == 0 {
		what := "missing"
		if _, ok := n.Metadata[transcript.MetaCoversIDs]; ok {
			what = "empty or not an array of ids"
		}
		c.errAt(Summaries, CodeCoversEmpty, i, "metadata.covers_ids is %s: a summary records the ids of the turns it replaces", what)
		return nil, false
	}
	idx := make([]int, len(ids))
	for k, id := range ids {
		j, ok := s.Lookup(id)
		if !ok {
			c.errAt(Summaries, CodeCoversMissing, i, "covers_ids[%d] %q does not exist", k, id)
			return nil, false
		}
		if s.IsSummary(j) {
			c.errAt(Summaries, CodeCoversSummary, i, "covers_ids[%d] %q is a summary; coverage names real turns only (docs/FORMAT.md §4)", k, id)
			return nil, false
		}
		idx[k] = j
	}
	for k, j := range idx {
		if stamp[j] == tag {
			c.errAt(Summaries, CodeCoversNotContiguous, i, "covers_ids names %q twice", ids[k])
			return nil, false
		}
		if k > 0 && g.Pred(j) != idx[k-1] {
			p := g.Pred(j)
			if p >= 0 && stamp[p] == tag {
				// Two covered ids follow the same covered node: the
				// coverage holds a sibling branch (docs/FORMAT.md §4: ids, not a
				// seq sweep that drags dead forks in).
				sib := ""
				for m := 0; m < k; m++ {
					if g.Pred(idx[m]) == p {
						sib = ids[m]
						break
					}
				}
				c.errAt(Summaries, CodeCoversDeadFork, i, "covers_ids holds two branches from %q (%q and %q): coverage names a dead fork", g.ID(p), sib, ids[k])
				return nil, false
			}
			c.errAt(Summaries, CodeCoversNotContiguous, i, "covers_ids is not a contiguous chain: covers_ids[%d] %q does not follow %q (its predecessor is %s)",
				k, ids[k], ids[k-1], quoteOrNull(s.Ref(j).Predecessor))
			return nil, false
		}
		stamp[j] = tag
	}
	return idx, true
}

// covered is seg's chain, in order: kept for the active segment, walked
// back from its last node for the others (checkCoverage found it whole).
func (c *checker) covered(seg *segment) []int {
	if seg.covered != nil {
		return seg.covered
	}
	idx := make([]int, seg.n)
	x := seg.last
	for k := seg.n - 1; k >= 0; k-- {
		idx[k] = x
		x = c.g.Pred(x)
	}
	return idx
}

// checkActive: docs/FORMAT.md §4's one active summary is the latest one written, and
// session.json carries its text for the next chaining.
func (c *checker) checkActive() {
	s := c.s
	if len(c.segs) == 0 {
		return
	}
	latest := c.segs[len(c.segs)-1].summary
	if c.undone() {
		// An uncompact (or redo) chose the active summary: neither the
		// latest nor any need be active (docs/FORMAT.md §10).
		return
	}
	if s.Meta.ActiveSummaryID == "" {
		c.add(Summaries, Warning, CodeActiveSummaryUnset, latest, c.metaPath(), c.s.MetaKeyLine("active_summary_id"),
			"the session has %d summary node(s) but session.json names no active summary: every render is raw", len(c.segs))
		return
	}
	if c.active == nil {
		return // dag reported active_summary_missing or active_summary_not_summary
	}
	if latest != c.active.summary {
		c.add(Summaries, Warning, CodeActiveSummaryNotLast, latest, c.metaPath(), c.s.MetaKeyLine("active_summary_id"),
			"was written after the active summary %q; only one summary is active and it is the latest (docs/FORMAT.md §4)", s.Meta.ActiveSummaryID)
	}
	if n := c.activeNode; n != nil {
		if text := strings.TrimPrefix(n.Content.PlainText(), transcript.SummaryPrefix); text != s.Meta.ActiveSummaryText {
			c.add(Summaries, Warning, CodeActiveSummaryTextDiff, c.active.summary, c.metaPath(), c.s.MetaKeyLine("active_summary_text"),
				"session.json active_summary_text differs from the active summary's content (the next compaction chains from it)")
		}
	}
}

// checkExtension: docs/FORMAT.md §4 — when a later summary's chain holds an earlier
// summary's whole segment, the later covers_ids begins with the earlier
// one (re-compaction absorbs the previous summary's turns). The earlier
// segment is a chain ending at its last node, so the later chain holds it
// exactly when that node lies on the later segment's last node's spine:
// one dag.Graph.IsAncestor test per pair, with no walk to the root per
// summary (which made many re-compactions on a deep chain quadratic).
func (c *checker) checkExtension() {
	if len(c.segs) < 2 {
		return
	}
	g := c.g
	for j, later := range c.segs {
		if !later.contiguous || j == 0 || g.Depth(later.first) < 0 {
			continue
		}
		for _, earlier := range c.segs[:j] {
			if !earlier.contiguous || !g.IsAncestor(earlier.last, later.last) {
				continue
			}
			// Both are chains and the later one holds the earlier's last
			// node, so it begins with the whole earlier segment exactly
			// when both begin at the same node.
			if later.first != earlier.first {
				c.errAt(Summaries, CodeSummaryNotExtending, later.summary,
					"its chain holds the whole segment of the earlier summary %q (%q…%q) but its coverage does not begin with it: re-compaction extends the previous segment (docs/FORMAT.md §4)",
					g.ID(earlier.summary), g.ID(earlier.first), g.ID(earlier.last))
				break
			}
		}
	}
}

// checkToolSplits: a summary's segment never separates a tool call from
// its results — neither a covered result whose call precedes the segment,
// nor a covered call whose result follows it.
func (c *checker) checkToolSplits() {
	s, g := c.s, c.g
	openAtEnd := map[int]map[string]int{} // last covered node → open call → node making it
	for _, seg := range c.segs {
		if !seg.contiguous {
			continue
		}
		open := map[string]int{}
		reported := false
		covered := c.covered(seg)
		for _, j := range covered {
			for _, r := range s.Ref(j).ResultIDs {
				if _, ok := open[r]; ok {
					delete(open, r)
					continue
				}
				if caller := c.callAbove(seg.first, r); caller >= 0 && !reported {
					c.errAt(Summaries, CodeCoversSplitsToolCall, seg.summary,
						"covers the result of call %q (node %q) but not the call (node %q, before the segment): coverage separates a tool call from its result",
						r, g.ID(j), g.ID(caller))
					reported = true
				}
			}
			for _, call := range s.Ref(j).ToolCallIDs {
				open[call] = j
			}
		}
		if len(open) > 0 && !reported {
			openAtEnd[seg.last] = open
		}
	}
	if len(openAtEnd) == 0 {
		return
	}
	done := map[int]bool{}
	for x := range s.Len() {
		p := g.Pred(x)
		open, ok := openAtEnd[p]
		if !ok || done[p] {
			continue
		}
		for _, r := range s.Ref(x).ResultIDs {
			if caller, ok := open[r]; ok {
				for _, seg := range c.segs {
					if seg.contiguous && seg.last == p {
						c.errAt(Summaries, CodeCoversSplitsToolCall, seg.summary,
							"covers call %q (node %q) but not its result (node %q, after the segment): coverage separates a tool call from its result",
							r, g.ID(caller), g.ID(x))
					}
				}
				done[p] = true
				break
			}
		}
	}
}

// callAbove finds the node that made call, looking up from first's
// predecessor past the nodes that continue its tool group
// (transcript.CallsBefore); -1 if none.
func (c *checker) callAbove(first int, call string) int {
	s, g := c.s, c.g
	owner, calls, _, err := transcript.CallsBefore(g.Pred(first), func(p int) (transcript.ToolFacts, int, bool) {
		if p < 0 {
			return transcript.ToolFacts{}, -1, false
		}
		return s.Ref(p).ToolFacts(), g.Pred(p), true
	}, 1<<16)
	if err != nil || !slices.Contains(calls, call) {
		return -1
	}
	return owner
}

func quote(s string) string { return strconv.Quote(s) }

func quoteOrNull(s string) string {
	if s == "" {
		return "null"
	}
	return quote(s)
}

// undone reports whether the last undo or redo record left active the
// summary session.json names: then it, not the latest written, is active.
func (c *checker) undone() bool {
	events, err := c.s.UndoEvents()
	if err != nil || len(events) == 0 {
		return false
	}
	return events[len(events)-1].Active == c.s.Meta.ActiveSummaryID
}
