package graph

import (
	"fmt"

	"github.com/ctxfold/ctxfold/dag"
)

// itemKind is what one line of a drawing stands for.
type itemKind uint8

const (
	kindNode    itemKind = iota // a node drawn raw
	kindCapsule                 // the active summary, folding its covered nodes
	kindInside                  // a folded node drawn inside an expanded capsule
)

// layout is the drawing every format shares: the DAG as a tree of items,
// with docs/FORMAT.md §4's capsule fold applied (dag.Fold). Item k < n is node k drawn
// raw (or the capsule, for the active summary when it applies); item n+k is
// node k drawn inside the capsule. It holds indexes only, never content, so
// it stays small for large sessions.
type layout struct {
	g    *dag.Graph
	fold *dag.Fold
	// pinned are the ids the user pinned (Options.Pinned), marked in
	// every format.
	pinned map[string]bool
	n      int
	expand bool
	parent []int32 // item -> parent item, -1 for a root
	shown  []bool  // item is drawn
	// spawned: the item hangs from its parent through a caller link
	// (a spawned subtree), not a predecessor.
	spawned  []bool
	children [][]int32
	onHead   []bool // item lies on the path from a root to HEAD's item
	roots    []int32
	// cut marks drawn items whose parent is not drawn (--around).
	cut []bool
	// limited: --around restricts the drawing.
	limited bool
	// hasMain: the item's last child continues straight below it; without
	// one (only spawned children) every child hangs off to the side.
	hasMain []bool
}

func (l *layout) node(item int) int { return item % l.n }

func (l *layout) kind(item int) itemKind {
	switch {
	case item >= l.n:
		return kindInside
	case item == l.fold.Summary && l.fold.Applies:
		return kindCapsule
	}
	return kindNode
}

// AroundError is a --around request that cannot be drawn: an id that names
// no node, or a negative depth. It is a usage error; this is the one place
// both are checked.
type AroundError struct {
	Dir, ID string
	Msg     string
}

func (e *AroundError) Error() string { return fmt.Sprintf("%s: --around %q: %s", e.Dir, e.ID, e.Msg) }

// newLayout builds the drawing. around (a node id, "" for all) and depth
// limit it to the items within depth steps of that node's item.
func newLayout(g *dag.Graph, expand bool, around string, depth int) (*layout, error) {
	n := g.Len()
	f := g.Fold()
	l := &layout{g: g, fold: f, n: n, expand: expand,
		parent: make([]int32, 2*n), shown: make([]bool, 2*n), spawned: make([]bool, 2*n)}
	head := g.Head()
	for i := 0; i < n; i++ {
		p, viaCaller := g.Pred(i), false
		if p < 0 && g.Caller(i) >= 0 {
			p, viaCaller = g.Caller(i), true
		}
		switch {
		case i == f.Summary && f.Applies:
			// The capsule stands where the covered segment began.
			p, viaCaller = g.Pred(i), false
		case f.Applies && !f.Folded(i) && p == f.Last() && !viaCaller:
			// The first kept nodes follow the capsule, not the hidden
			// last covered node.
			p = f.Summary
		}
		l.parent[i], l.spawned[i] = int32(p), viaCaller
		// docs/FORMAT.md §4: covered nodes disappear only on branches that carry the
		// summary; HEAD is always drawn, raw if its context is raw.
		l.shown[i] = !f.Hidden(i)
		// Inside the capsule: every folded node, hanging from its folded
		// predecessor or caller, the segment's first node from the capsule.
		l.parent[n+i] = -1
		if f.Applies && f.Folded(i) {
			q, viaC := g.Pred(i), false
			if q < 0 || !f.Folded(q) {
				if c := g.Caller(i); c >= 0 && f.Folded(c) {
					q, viaC = c, true
				} else {
					q = -1
				}
			}
			if q >= 0 {
				l.parent[n+i], l.spawned[n+i] = int32(n+q), viaC
			} else {
				l.parent[n+i] = int32(f.Summary)
			}
			l.shown[n+i] = expand
		}
	}
	if head >= 0 && !l.shown[head] {
		// HEAD rests inside the covered range: its own context is raw, so
		// draw its path raw as well.
		for x := head; x >= 0 && !l.shown[x]; x = int(l.parent[x]) {
			l.shown[x] = true
		}
	}
	if around != "" {
		if depth < 0 {
			return nil, &AroundError{Dir: g.S.Dir, ID: around, Msg: fmt.Sprintf("--depth must be at least 0, got %d", depth)}
		}
		a, ok := g.Lookup(around)
		if !ok {
			return nil, &AroundError{Dir: g.S.Dir, ID: around, Msg: "no such node"}
		}
		if !l.shown[a] {
			if !l.shown[n+a] && f.Applies && f.Folded(a) {
				// The node is folded away: open the capsule to show it.
				l.expand = true
				for i := 0; i < n; i++ {
					if f.Folded(i) {
						l.shown[n+i] = true
					}
				}
			}
			a += n
		}
		l.limit(a, depth)
		l.limited = true
	}
	l.buildChildren(head)
	return l, nil
}

// limit keeps the drawn items within depth steps of item a.
func (l *layout) limit(a, depth int) {
	l.buildChildren(-1)
	dist := make([]int32, len(l.parent))
	for i := range dist {
		dist[i] = -1
	}
	dist[a] = 0
	queue := []int32{int32(a)}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		if int(dist[x]) >= depth {
			continue
		}
		next := append([]int32(nil), l.children[x]...)
		if p := l.parent[x]; p >= 0 && l.shown[p] {
			next = append(next, p)
		}
		for _, y := range next {
			if dist[y] < 0 {
				dist[y] = dist[x] + 1
				queue = append(queue, y)
			}
		}
	}
	for i := range l.shown {
		l.shown[i] = l.shown[i] && dist[i] >= 0
	}
}

// buildChildren indexes drawn children and roots, ordering each node's
// children so the one leading to HEAD comes last and continues straight
// down (side branches hang off to the right first, like git log --graph).
func (l *layout) buildChildren(head int) {
	m := len(l.parent)
	l.children = make([][]int32, m)
	l.onHead = make([]bool, m)
	l.cut = make([]bool, m)
	l.hasMain = make([]bool, m)
	l.roots = l.roots[:0]
	if head >= 0 {
		for x := head; x >= 0; x = int(l.parent[x]) {
			l.onHead[x] = true
		}
	}
	for it := 0; it < m; it++ {
		if !l.shown[it] {
			continue
		}
		p := l.parent[it]
		if p < 0 || !l.shown[p] {
			l.cut[it] = p >= 0
			l.roots = append(l.roots, int32(it))
			continue
		}
		l.children[p] = append(l.children[p], int32(it))
	}
	for it := range l.children {
		l.hasMain[it] = l.orderMainLast(l.children[it], it)
	}
	l.orderMainLast(l.roots, -1)
}

// orderMainLast moves the main child to the end and reports whether there
// is one: the child on HEAD's path, else the last one linked by
// predecessor (a spawned subtree always hangs to the side). Inside items of
// a capsule come before its raw children.
func (l *layout) orderMainLast(kids []int32, parent int) bool {
	main := -1
	for k, c := range kids {
		if l.onHead[c] {
			main = k
		}
	}
	if main < 0 {
		for k := len(kids) - 1; k >= 0; k-- {
			if !l.spawned[kids[k]] {
				main = k
				break
			}
		}
	}
	if main < 0 {
		if parent < 0 {
			return true // roots: drawn one after the other
		}
		return false
	}
	m := kids[main]
	copy(kids[main:], kids[main+1:])
	kids[len(kids)-1] = m
	if parent >= 0 && l.kind(parent) == kindCapsule {
		// Stable: inside items (>= n) first.
		var in, out []int32
		for _, c := range kids {
			if int(c) >= l.n {
				in = append(in, c)
			} else {
				out = append(out, c)
			}
		}
		copy(kids, append(in, out...))
		if len(out) == 0 {
			return false
		}
	}
	return true
}

// line is one row of a drawing.
type line struct {
	item int
	// prefix is the tree art before the node's glyph.
	prefix string
	// inside: a folded node drawn inside its expanded capsule.
	inside bool
}

// walk emits the drawing's lines in order, depth first, without recursion
// (a session can be one very long chain).
func (l *layout) walk(fn func(line) error) error {
	type frame struct {
		item       int32
		lead, cont string
	}
	var stack []frame
	for k := len(l.roots) - 1; k >= 0; k-- {
		stack = append(stack, frame{l.roots[k], "", ""})
	}
	for len(stack) > 0 {
		fr := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		it := int(fr.item)
		if err := fn(line{item: it, prefix: fr.lead, inside: it >= l.n}); err != nil {
			return err
		}
		kids := l.children[it]
		if len(kids) == 0 {
			continue
		}
		// Push in reverse so they pop in order: inside items and side
		// branches first, the main child last, straight below.
		mainIdx := -1
		if l.hasMain[it] {
			mainIdx = len(kids) - 1
		}
		for k := len(kids) - 1; k >= 0; k-- {
			c := kids[k]
			insideStart := int(c) >= l.n && it < l.n
			switch {
			case insideStart:
				stack = append(stack, frame{c, fr.cont + "┆ ", fr.cont + "┆ "})
			case k == mainIdx:
				stack = append(stack, frame{c, fr.cont, fr.cont})
			case mainIdx < 0 && k == len(kids)-1:
				stack = append(stack, frame{c, fr.cont + "└─", fr.cont + "  "})
			default:
				stack = append(stack, frame{c, fr.cont + "├─", fr.cont + "│ "})
			}
		}
	}
	return nil
}
