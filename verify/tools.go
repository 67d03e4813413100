package verify

import (
	"slices"

	"github.com/ctxfold/ctxfold/transcript"
)

// checkTools checks tool-call adjacency in the rendered view of HEAD and
// of every branch tip: each call has exactly one result before the next
// node that ends its tool group (transcript/tools.go), and no result is
// orphaned.
//
// The open calls at a node depend only on the open calls at its
// predecessor and on the node itself, and every view that holds a node
// agrees on what precedes it (covered nodes are seen raw, nodes below the
// active segment after the summary), so one pass in depth order checks
// every view at once: O(nodes + calls).
func (c *checker) checkTools() error {
	s, g := c.s, c.g
	for i := range s.Len() {
		r := s.Ref(i)
		switch {
		case r.Summary:
		case r.Role == transcript.RoleTool && len(r.ResultIDs) == 0:
			c.errAt(Tools, CodeToolNodeInvalid, i, "a tool node needs tool_call_id: it answers no call")
		case len(r.ToolCallIDs) > 0 && r.Role != transcript.RoleAssistant:
			c.errAt(Tools, CodeToolNodeInvalid, i, "only assistant nodes make tool calls (role is %s)", r.Role)
		case slices.Contains(r.ToolCallIDs, ""):
			c.errAt(Tools, CodeToolNodeInvalid, i, "a tool call has no id, so no result can answer it")
		}
	}
	state := make([][]pending, g.Len())
	reported := map[pending]bool{}
	last := c.subLast
	for k, x := range c.order {
		if k&0xffff == 0 {
			if err := c.ctx.Err(); err != nil {
				return err
			}
		}
		var open []pending
		// Below the active segment the view reads S in place of the
		// segment, and S is a text turn: nothing is open after it.
		if p := g.Pred(int(x)); p >= 0 && p != last {
			open = state[p]
		}
		state[x] = c.step(int(x), open, reported)
	}
	if c.subLast >= 0 {
		// S itself is a user text turn following its splice point.
		sum := c.active.summary
		if p := g.Pred(sum); p >= 0 {
			for _, o := range state[p] {
				c.errAt(Tools, CodeToolCallUnanswered, int(o.node), "tool call %q has no result before the summary %q in the rendered view (the result is covered)", o.call, g.ID(sum))
			}
		}
	}
	ends := c.tips
	if h := g.Head(); h >= 0 && !s.IsSummary(h) && !contains(ends, h) {
		ends = append(ends[:len(ends):len(ends)], h)
	}
	for _, t := range ends {
		if open := state[t]; len(open) > 0 {
			c.warnAt(Tools, CodeToolCallPending, t, "the view from here ends with %d tool call(s) awaiting a result (first %q): the next request needs them answered", len(open), open[0].call)
		}
	}
	return nil
}

// step applies node x to the calls open before it and returns those open
// after it.
func (c *checker) step(x int, open []pending, reported map[pending]bool) []pending {
	r := c.s.Ref(x)
	if len(r.ResultIDs) > 0 {
		rest := append([]pending(nil), open...)
		for _, res := range r.ResultIDs {
			k := -1
			for m, o := range rest {
				if o.call == res {
					k = m
					break
				}
			}
			if k < 0 {
				c.errAt(Tools, CodeToolResultOrphaned, x, "tool result for call %q has no open call before it in the rendered view (never made on this branch, answered already, or covered by the summary)", res)
				continue
			}
			rest = append(rest[:k], rest[k+1:]...)
		}
		open = rest
	}
	// A node that does not continue the tool group (docs/FORMAT.md §2,
	// tool-call adjacency) leaves every call still open unanswered.
	if !r.ToolFacts().ContinuesGroup() && len(open) > 0 {
		// A spawned turn (caller set) runs inside its caller's open call:
		// that call is answered on the caller's branch, not here. A summary
		// node is judged where it is read: checkTools checks the active one
		// at its splice point.
		if r.Caller == "" && !r.Summary {
			for _, o := range open {
				if !reported[o] {
					reported[o] = true
					c.errAt(Tools, CodeToolCallUnanswered, int(o.node), "tool call %q has no result before the next turn %q (line %d)", o.call, r.ID, r.Line)
				}
			}
		}
		open = nil
	}
	if len(r.ToolCallIDs) > 0 {
		next := make([]pending, 0, len(open)+len(r.ToolCallIDs))
		next = append(next, open...)
		for _, call := range r.ToolCallIDs {
			next = append(next, pending{call: call, node: int32(x)})
		}
		open = next
	}
	if len(open) == 0 {
		return nil
	}
	return open
}

func contains(list []int, x int) bool {
	for _, v := range list {
		if v == x {
			return true
		}
	}
	return false
}
