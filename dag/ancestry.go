package dag

// ancestry numbers the predecessor forest in pre and post order, so that
// "a lies on b's spine" is two comparisons. It is the one answer to "is
// this node at or below node L" for every package: the capsule fold (which
// nodes carry the summary) and verify's rendering and re-compaction checks.
type ancestry struct {
	// pre and post are each node's entry and exit numbers in a depth-first
	// walk from every node without a valid predecessor; -1 for a node the
	// walk never reaches (one on or below a predecessor cycle).
	pre, post []int32
}

// IsAncestor reports whether node a lies on node b's predecessor chain,
// b itself included: a == b, or a is b's predecessor, or its
// predecessor's, and so on. docs/FORMAT.md §4 substitutes the active summary exactly
// in the spines that hold its last covered node L, i.e. from every b with
// IsAncestor(L, b).
//
// The first call numbers the whole graph in O(n) with an iterative walk (a
// session can be one chain a million nodes deep); every call after that is
// O(1). A node on or below a predecessor cycle is an ancestor of itself
// only. Like Children, it is not safe for concurrent first use.
func (g *Graph) IsAncestor(a, b int) bool {
	if a == b {
		return true
	}
	if g.anc == nil {
		g.anc = g.numberForest()
	}
	pa, pb := g.anc.pre[a], g.anc.pre[b]
	if pa < 0 || pb < 0 {
		return false
	}
	return pa <= pb && g.anc.post[b] <= g.anc.post[a]
}

// numberForest walks the children index depth first from every root
// (including the first node below a missing predecessor, so broken chains
// are numbered too) without recursion: a node is pushed as itself to enter
// it and as its complement to leave it.
func (g *Graph) numberForest() *ancestry {
	n := g.Len()
	a := &ancestry{pre: make([]int32, n), post: make([]int32, n)}
	for i := range a.pre {
		a.pre[i], a.post[i] = -1, -1
	}
	var clock int32
	var stack []int32
	for r := 0; r < n; r++ {
		if g.predAt(r) >= 0 {
			continue
		}
		stack = append(stack[:0], int32(r))
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if x < 0 {
				a.post[^x] = clock
				clock++
				continue
			}
			a.pre[x] = clock
			clock++
			stack = append(stack, ^x)
			kids := g.Children(int(x))
			for k := len(kids) - 1; k >= 0; k-- {
				stack = append(stack, kids[k])
			}
		}
	}
	return a
}
