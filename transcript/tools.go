package transcript

import "fmt"

// The tool-call model: the one rule every package applies to tool calls and
// their results (docs/FORMAT.md §2, tool-call adjacency). A node that makes
// calls opens a tool group; the nodes after it that carry results and make
// no calls continue the group, whatever else they carry (text beside the
// results, or the images a result holds); the first node that makes calls or
// carries no result ends it, and a call still open there is unanswered. A
// node that carries results is never a turn start (Node.IsTurnStart).

// ToolFacts is what the tool-call model reads of one node: its role, the
// ids of the calls it makes and the call ids of the results it carries.
type ToolFacts struct {
	Role    Role
	Calls   []string
	Results []string
}

// ContinuesGroup reports whether the node belongs to the tool group before
// it: it carries results (a tool node always does) and makes no calls.
func (f ToolFacts) ContinuesGroup() bool {
	return len(f.Calls) == 0 && (len(f.Results) > 0 || f.Role == RoleTool)
}

// ToolFacts returns the node's tool facts.
func (n *Node) ToolFacts() ToolFacts {
	f := ToolFacts{Role: n.Role}
	for _, c := range n.AllToolCalls() {
		f.Calls = append(f.Calls, c.ID)
	}
	for _, r := range n.ToolResults() {
		f.Results = append(f.Results, r.ToolCallID)
	}
	return f
}

// HasText reports whether the node carries content of its own beside tool
// calls and results: text or an image block, or a non-empty string content
// on a node that is not a tool node. NodeRef.HasText is the same.
func (n *Node) HasText() bool {
	if !n.Content.IsBlocks {
		return n.Content.Text != "" && n.Role != RoleTool
	}
	for _, b := range n.Content.Blocks {
		if b.Type == BlockText || b.Type == BlockImage {
			return true
		}
	}
	return false
}

// CarriesOnlyResults reports whether the node carries tool results and
// nothing else: a tool node, or a node whose blocks are all tool_result
// blocks. A user node that also carries text or images is user content
// (fit protects it) though it continues its tool group.
func (n *Node) CarriesOnlyResults() bool {
	if len(n.ToolResults()) == 0 {
		return false
	}
	if n.Role == RoleTool {
		return true
	}
	if !n.Content.IsBlocks {
		return false
	}
	for _, b := range n.Content.Blocks {
		if b.Type != BlockToolResult {
			return false
		}
	}
	return true
}

// CallsBefore walks up a predecessor chain from id over the nodes that
// continue a tool group to the nearest node that makes calls, and returns
// that node, its call ids and the call ids answered on the way. calls is nil
// when the walk meets a node that ends a group without making calls, or the
// start of the chain: then no call is open after id. at returns a node's
// facts and its predecessor, ok false past the start of the chain; the walk
// fails after limit steps (a cyclic or absurdly long chain).
func CallsBefore[K comparable](id K, at func(K) (f ToolFacts, pred K, ok bool), limit int) (owner K, calls []string, answered map[string]bool, err error) {
	answered = map[string]bool{}
	cur := id
	for steps := 0; ; steps++ {
		f, pred, ok := at(cur)
		if !ok {
			var zero K
			return zero, nil, answered, nil
		}
		if len(f.Calls) > 0 {
			return cur, f.Calls, answered, nil
		}
		if !f.ContinuesGroup() {
			var zero K
			return zero, nil, answered, nil
		}
		for _, r := range f.Results {
			answered[r] = true
		}
		cur = pred
		if steps >= limit {
			var zero K
			return zero, nil, answered, fmt.Errorf("predecessor chain too long or cyclic")
		}
	}
}

// OpenCalls returns the calls of CallsBefore that are still unanswered, in
// call order; nil when none is open.
func OpenCalls(calls []string, answered map[string]bool) []string {
	var open []string
	for _, c := range calls {
		if !answered[c] {
			open = append(open, c)
		}
	}
	return open
}

// ToolGroup is a node that makes calls plus the nodes after it that
// continue its group, as positions in a node list.
type ToolGroup struct {
	Call    int
	Results []int
	// Complete is true when every call of the group has a result in it.
	Complete bool
}

// Last is the position of the group's last node.
func (g ToolGroup) Last() int {
	if len(g.Results) == 0 {
		return g.Call
	}
	return g.Results[len(g.Results)-1]
}

// ToolGroups lists the tool groups of a linear view (each node following the
// one before it), in order.
func ToolGroups(nodes []*Node) []ToolGroup {
	var out []ToolGroup
	for k := 0; k < len(nodes); k++ {
		calls := nodes[k].AllToolCalls()
		if len(calls) == 0 {
			continue
		}
		open := map[string]bool{}
		for _, c := range calls {
			open[c.ID] = true
		}
		g := ToolGroup{Call: k}
		j := k + 1
		for ; j < len(nodes); j++ {
			f := nodes[j].ToolFacts()
			if !f.ContinuesGroup() {
				break
			}
			g.Results = append(g.Results, j)
			for _, r := range f.Results {
				delete(open, r)
			}
		}
		g.Complete = len(open) == 0
		out = append(out, g)
		k = j - 1
	}
	return out
}

// CallChain keeps the tool facts of the nodes a format has built, in
// order, so it can ask which calls the next node may answer by the same
// rule the store applies (CallsBefore, OpenCalls) instead of tracking open
// calls itself.
type CallChain struct {
	facts map[string]chainFacts
}

type chainFacts struct {
	f    ToolFacts
	pred string
}

// Add records n (after its content is final).
func (c *CallChain) Add(n *Node) {
	if c.facts == nil {
		c.facts = map[string]chainFacts{}
	}
	c.facts[n.ID] = chainFacts{n.ToolFacts(), n.Predecessor}
}

// Open returns the calls still unanswered after the node pred (nil when
// none is open, or pred is "").
func (c *CallChain) Open(pred string) []string {
	_, calls, answered, err := CallsBefore(pred, func(id string) (ToolFacts, string, bool) {
		e, ok := c.facts[id]
		return e.f, e.pred, ok
	}, len(c.facts))
	if err != nil {
		return nil
	}
	return OpenCalls(calls, answered)
}
