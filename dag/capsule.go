package dag

import "slices"

// Fold is the graph's projection of the substitution rule (docs/FORMAT.md
// §4, the graph: the same rule, stated over the same covers_ids, drives the
// capsule fold — one fact, two projections). It says which nodes' context carries the active
// summary (the capsule is drawn on exactly those branches), which nodes the
// capsule folds away there, and the covers_ids the graph's wire contract
// publishes (docs/FORMAT.md §4). It is computed from data alone: no sequence
// arithmetic, nothing depends on HEAD.
type Fold struct {
	g *Graph
	// Summary is the active summary's index, -1 when there is none.
	Summary int
	// Segment is the covered segment: the nodes of metadata.covers_ids that
	// exist, in covers_ids order.
	Segment []int
	// Applies is true when docs/FORMAT.md §4's test passes for the spines through the
	// segment's last node, i.e. some branch renders with the summary.
	// Missing covered ids, a broken run or a wrong splice point make it
	// false, and then every branch renders raw.
	Applies bool
	// CoversIDs is the active summary row's covers_ids (docs/FORMAT.md §4): verbatim
	// metadata.covers_ids minus ids that no longer exist, extended with the
	// caller subtrees of covered turns in file order.
	CoversIDs []string

	last    int
	folded  []bool
	carries []bool
	rawVis  []bool
	turnOf  []int32
}

// Fold computes the capsule fold of the active summary.
func (g *Graph) Fold() *Fold {
	f := &Fold{g: g, Summary: g.active, last: none}
	if f.Summary < 0 {
		return f
	}
	f.findSegment()
	f.markCarries()
	extra := f.foldCallerSubtrees()
	f.assignTurns(extra)
	f.markRawVisible()
	return f
}

// findSegment resolves the summary's covers_ids and decides whether the
// substitution rule applies.
func (f *Fold) findSegment() {
	g := f.g
	ids := g.CoverIDs(f.Summary)
	f.CoversIDs = make([]string, 0, len(ids))
	for _, id := range ids {
		if j, ok := g.Lookup(id); ok {
			f.Segment = append(f.Segment, j)
			f.CoversIDs = append(f.CoversIDs, id)
		}
	}
	// The rule itself, unchanged: Substitute's test on the spine through
	// the segment's last node. SegmentOnSpine looks only at spine positions
	// up to that node's depth, and every spine through the last covered
	// node agrees with this one there, so the answer holds for all of them
	// (Carries relies on that; TestFoldMatchesSubstitute checks it).
	if covered, ok := g.Covered(f.Summary); ok && len(covered) > 0 {
		last := covered[len(covered)-1]
		if _, ok := g.SegmentOnSpine(g.Spine(last), covered, g.Pred(f.Summary)); ok {
			f.Applies, f.last = true, last
		}
	}
}

func (f *Fold) markCarries() {
	g := f.g
	n := g.Len()
	// Carries: rendering from i substitutes exactly when i's spine holds
	// the last covered node, i.e. i is that node or descends from it.
	f.carries = make([]bool, n)
	if f.Applies {
		for i := 0; i < n; i++ {
			f.carries[i] = g.IsAncestor(f.last, i)
		}
	}
}

// foldCallerSubtrees marks the folded nodes and returns those beyond the
// segment, in no particular order.
func (f *Fold) foldCallerSubtrees() []int {
	g := f.g
	n := g.Len()
	// Folded: the segment plus the caller subtrees of covered turns (a
	// covered turn folds together with its tool calls, docs/FORMAT.md §4). A caller
	// subtree is every node spawned by a covered turn, their predecessor
	// descendants and whatever those spawn in turn — but never a node that
	// carries the summary: a covered turn's callee can also follow the last
	// covered node (append --caller allows it), and then it is the first
	// kept node, which the model reads (docs/FORMAT.md §4: one fact, two
	// projections — covers_ids never names a node of a carrying view).
	// turnOf records the covered turn each folded node belongs to.
	f.folded = make([]bool, n)
	f.turnOf = make([]int32, n)
	for i := range f.turnOf {
		f.turnOf[i] = none
	}
	for _, c := range f.Segment {
		f.folded[c] = true
		f.turnOf[c] = int32(c)
	}
	byCaller := g.callees()
	queue := make([]int, 0, len(f.Segment))
	for _, c := range f.Segment {
		for _, k := range byCaller[c] {
			queue = append(queue, int(k))
		}
	}
	var extra []int
	for len(queue) > 0 {
		x := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if f.folded[x] || g.S.IsSummary(x) || f.carries[x] {
			continue
		}
		f.folded[x] = true
		extra = append(extra, x)
		for _, k := range g.Children(x) {
			queue = append(queue, int(k))
		}
		for _, k := range byCaller[x] {
			queue = append(queue, int(k))
		}
	}
	return extra
}

// assignTurns gives every extra folded node its covered turn and appends
// it to CoversIDs.
func (f *Fold) assignTurns(extra []int) {
	g := f.g
	// A node's caller and predecessor precede it in the file (the store
	// refuses anything else), so file order settles each node's turn.
	slices.Sort(extra)
	for _, x := range extra {
		if c := g.Caller(x); c >= 0 && f.turnOf[c] >= 0 {
			f.turnOf[x] = f.turnOf[c]
		} else if p := g.Pred(x); p >= 0 && f.turnOf[p] >= 0 {
			f.turnOf[x] = f.turnOf[p]
		}
	}
	for _, x := range extra {
		f.CoversIDs = append(f.CoversIDs, g.ID(x))
	}
}

func (f *Fold) markRawVisible() {
	n := f.g.Len()
	// A folded node is still drawn raw where a branch that does not carry
	// the summary runs through it (a fork from inside the covered range).
	// Caller subtrees are drawn wherever their covered turn is.
	f.rawVis = make([]bool, n)
	if f.Applies {
		for y := 0; y < n; y++ {
			if f.folded[y] || f.carries[y] || y == f.Summary {
				continue
			}
			for x := f.displayParent(y); x >= 0 && f.folded[x] && !f.rawVis[x]; x = f.displayParent(x) {
				f.rawVis[x] = true
			}
		}
		for x := 0; x < n; x++ {
			if f.folded[x] && f.turnOf[x] >= 0 && f.rawVis[f.turnOf[x]] {
				f.rawVis[x] = true
			}
		}
	}
}

// displayParent is where node i hangs in a drawing of the raw graph: its
// predecessor, else the caller that spawned it.
func (f *Fold) displayParent(i int) int {
	if p := f.g.Pred(i); p >= 0 {
		return p
	}
	return f.g.Caller(i)
}

// Carries reports whether rendering from node i substitutes the active
// summary — docs/FORMAT.md §4's answer for i's spine.
func (f *Fold) Carries(i int) bool { return f.carries != nil && f.carries[i] }

// Folded reports whether node i is folded into the capsule: a covered node
// or part of a covered turn's caller subtree. It is meaningful whatever
// Applies says; wire rows list these ids in CoversIDs.
func (f *Fold) Folded(i int) bool { return f.folded != nil && f.folded[i] }

// Hidden reports whether node i disappears into the capsule in a folded
// drawing: it is folded and no branch that renders raw runs through it.
// Nothing is hidden when the summary applies to no branch.
func (f *Fold) Hidden(i int) bool {
	return f.Applies && f.folded[i] && !f.rawVis[i]
}

// Turn is the covered turn a folded node belongs to (itself for a segment
// node), or -1.
func (f *Fold) Turn(i int) int {
	if f.turnOf == nil {
		return none
	}
	return int(f.turnOf[i])
}

// Last is the segment's last node when Applies, else -1. Its children are
// the first kept nodes: in a folded drawing they hang under the capsule.
func (f *Fold) Last() int { return f.last }

// callees indexes nodes by caller.
func (g *Graph) callees() [][]int32 {
	out := make([][]int32, g.Len())
	for j := range g.S.Len() {
		c := g.callerAt(j)
		if c >= 0 {
			out[c] = append(out[c], int32(j))
		}
	}
	return out
}
