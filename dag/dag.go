// Package dag owns the structure of a session: predecessor spines, the
// children index, HEAD, the active summary and docs/FORMAT.md §4's segment
// substitution. It works on the transcript index only — it never reads
// content, counts tokens or formats output.
package dag

import (
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// IntegrityError is a structural fault of a session that stops commands
// from trusting its graph: the store's one integrity error (its codes are
// transcript.Code*, docs/VERIFY.md).
type IntegrityError = store.IntegrityError

const (
	none    = store.NoLink
	missing = store.MissingLink
)

// Graph is the structure of one session snapshot. Node indexes are those of
// the session's index (store.Session.Ref).
type Graph struct {
	S      *store.Session
	depth  []int32
	head   int
	active int
	// children is built on first use.
	children [][]int32
	// anc (ancestry.go) is built on first use.
	anc *ancestry
}

// New builds the graph and returns every integrity fault found. The graph
// is usable for rendering only when no fault is returned.
func New(s *store.Session) (*Graph, []*IntegrityError) {
	g := &Graph{S: s, depth: make([]int32, s.Len()), head: none, active: none}
	errs := s.Faults()
	g.computeDepths()
	if i, ok := s.Lookup(s.Meta.Head); ok && s.Meta.Head != "" && !s.IsSummary(i) {
		g.head = i
	}
	if i, ok := s.Lookup(s.Meta.ActiveSummaryID); ok && s.Meta.ActiveSummaryID != "" && s.IsSummary(i) {
		g.active = i
	}
	return g, errs
}

// Load builds the graph and fails on the first integrity fault.
func Load(s *store.Session) (*Graph, error) {
	g, errs := New(s)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return g, nil
}

// computeDepths sets depth (root = 0) for every node whose predecessor chain
// reaches a root, in O(n); a node on or below a cycle or a missing link
// is marked broken (the store's Faults names those).
func (g *Graph) computeDepths() {
	const unknown, visiting, broken = -1, -2, -3
	for i := range g.depth {
		g.depth[i] = unknown
	}
	var stack []int32
	for start := range g.depth {
		if g.depth[start] != unknown {
			continue
		}
		stack = stack[:0]
		cur := int32(start)
		var base int32
		for {
			if g.depth[cur] >= 0 {
				base = g.depth[cur] + 1
				break
			}
			if g.depth[cur] == broken {
				base = broken
				break
			}
			if g.depth[cur] == visiting {
				base = broken
				break
			}
			g.depth[cur] = visiting
			stack = append(stack, cur)
			p := g.predAt(int(cur))
			if p == none {
				stack = stack[:len(stack)-1]
				g.depth[cur] = 0
				base = 1
				break
			}
			if p == missing {
				stack = stack[:len(stack)-1]
				g.depth[cur] = broken
				base = broken
				break
			}
			cur = p
		}
		for k := len(stack) - 1; k >= 0; k-- {
			if base == broken {
				g.depth[stack[k]] = broken
				continue
			}
			g.depth[stack[k]] = base
			base++
		}
	}
}

// Len is the number of nodes.
func (g *Graph) Len() int { return g.S.Len() }

// Ref is the index entry of node i.
func (g *Graph) Ref(i int) store.NodeRef { return g.S.Ref(i) }

// predAt and callerAt are the links as the index resolved them: a node
// index, none, or missing (the same values as transcript's NoLink and
// MissingLink).
func (g *Graph) predAt(i int) int32   { return int32(g.S.PredIndex(i)) }
func (g *Graph) callerAt(i int) int32 { return int32(g.S.CallerIndex(i)) }

// ID is node i's id.
func (g *Graph) ID(i int) string { return g.S.ID(i) }

// Lookup finds a node by id.
func (g *Graph) Lookup(id string) (int, bool) { return g.S.Lookup(id) }

// Pred is the index of node i's predecessor, or -1 for a root.
func (g *Graph) Pred(i int) int {
	if g.predAt(i) < 0 {
		return none
	}
	return int(g.predAt(i))
}

// Caller is the index of node i's caller, or -1.
func (g *Graph) Caller(i int) int {
	if g.callerAt(i) < 0 {
		return none
	}
	return int(g.callerAt(i))
}

// Depth is the number of predecessors of node i (a root has depth 0), or
// -1 when its chain is broken.
func (g *Graph) Depth(i int) int {
	if g.depth[i] < 0 {
		return -1
	}
	return int(g.depth[i])
}

// Head is HEAD's index, or -1 in an empty session.
func (g *Graph) Head() int { return g.head }

// ActiveSummary is the active summary's index, or -1 (docs/FORMAT.md §4: at most one).
func (g *Graph) ActiveSummary() int { return g.active }

// IsRelic reports whether node i is a superseded summary: on disk, never
// consulted again (docs/FORMAT.md §4).
func (g *Graph) IsRelic(i int) bool { return g.S.IsSummary(i) && i != g.active }

// Spine returns the predecessor chain of node i, root first, ending at i.
// O(depth).
func (g *Graph) Spine(i int) []int {
	d := g.Depth(i)
	if d < 0 {
		return nil
	}
	spine := make([]int, d+1)
	for cur := i; cur >= 0; cur = g.Pred(cur) {
		spine[g.depth[cur]] = cur
	}
	return spine
}

// Children returns node i's children by predecessor, in file order.
func (g *Graph) Children(i int) []int32 {
	if g.children == nil {
		g.children = make([][]int32, g.S.Len())
		for j := range g.S.Len() {
			p := g.predAt(j)
			if p >= 0 {
				g.children[p] = append(g.children[p], int32(j))
			}
		}
	}
	return g.children[i]
}

// Tips returns every non-summary node without a non-summary child: the
// ends of branches, HEAD's among them.
func (g *Graph) Tips() []int {
	hasChild := make([]bool, g.S.Len())
	for j := range g.S.Len() {
		p := g.predAt(j)
		if p >= 0 && !g.S.IsSummary(j) {
			hasChild[p] = true
		}
	}
	var tips []int
	for i := range g.S.Len() {
		if !hasChild[i] && !g.S.IsSummary(i) {
			tips = append(tips, i)
		}
	}
	return tips
}

// Covered returns the node indexes of summary s's coverage, in chain
// order, or ok=false when one of them does not exist. A covers_ids list
// (format version 1) is looked up id by id; a covers_span (version 2) is
// expanded by walking back from its last node: ok=false unless the walk
// meets its first node after exactly its count, on real turns only
// (docs/FORMAT.md §4). O(covered nodes); nothing is kept.
func (g *Graph) Covered(s int) ([]int, bool) {
	ref := g.S.Ref(s)
	if sp := ref.CoversSpan; sp.Valid() {
		return g.spanNodes(sp)
	}
	ids := ref.CoversIDs
	out := make([]int, len(ids))
	for k, id := range ids {
		j, ok := g.S.Lookup(id)
		if !ok {
			return nil, false
		}
		out[k] = j
	}
	return out, true
}

func (g *Graph) spanNodes(sp transcript.CoverSpan) ([]int, bool) {
	last, ok := g.S.Lookup(sp.Last)
	// A chain of Count nodes ending at last has last at depth Count-1 or
	// deeper; anything else (a broken link, too short a chain) is refused
	// before allocating Count slots.
	if !ok || g.Depth(last) < sp.Count-1 {
		return nil, false
	}
	out := make([]int, sp.Count)
	x := last
	for k := sp.Count - 1; k >= 0; k-- {
		if x < 0 || g.S.IsSummary(x) {
			return nil, false
		}
		out[k] = x
		x = g.Pred(x)
	}
	if g.S.ID(out[0]) != sp.First {
		return nil, false
	}
	return out, true
}

// CoverIDs is summary s's coverage as ids: a covers_ids list verbatim, a
// covers_span expanded (nil when it does not resolve).
func (g *Graph) CoverIDs(s int) []string {
	ref := g.S.Ref(s)
	if !ref.CoversSpan.Valid() {
		return ref.CoversIDs
	}
	idx, ok := g.spanNodes(ref.CoversSpan)
	if !ok {
		return nil
	}
	ids := make([]string, len(idx))
	for k, j := range idx {
		ids[k] = g.ID(j)
	}
	return ids
}

// Substitution is the outcome of docs/FORMAT.md §4 for one spine.
type Substitution struct {
	// At is the spine position where the covered segment began, Len its
	// length; Summary the substituted summary, -1 when the spine renders raw.
	At, Len int
	Summary int
}

// Substitute applies docs/FORMAT.md §4 to a spine: if every id the active summary
// covers lies on the spine, as one contiguous run starting right after the
// summary's splice point, the run is replaced by the summary. Otherwise the
// spine renders raw. Only the active summary is consulted; relics never
// elide anything. O(len(covers_ids)).
func (g *Graph) Substitute(spine []int) Substitution {
	raw := Substitution{Summary: none}
	s := g.active
	if s < 0 {
		return raw
	}
	covered, ok := g.Covered(s)
	if !ok {
		return raw
	}
	at, ok := g.SegmentOnSpine(spine, covered, g.Pred(s))
	if !ok {
		return raw
	}
	return Substitution{At: at, Len: len(covered), Summary: s}
}

// SegmentOnSpine is docs/FORMAT.md §4's test for one summary: whether covered (node
// indexes, in order) lies on spine as one contiguous run that begins right
// after splicePred (the summary's predecessor, -1 for none). It returns the
// run's spine position.
func (g *Graph) SegmentOnSpine(spine []int, covered []int, splicePred int) (int, bool) {
	if len(covered) == 0 || len(spine) == 0 {
		return 0, false
	}
	at := g.Depth(covered[0])
	if at < 0 {
		return 0, false
	}
	for k, c := range covered {
		d := at + k
		// docs/FORMAT.md §4: a branch lacking any covered id renders raw.
		if g.Depth(c) != d || d >= len(spine) || spine[d] != c {
			return 0, false
		}
	}
	// The summary's splice point must be where the segment began.
	if splicePred != g.Pred(covered[0]) {
		return 0, false
	}
	return at, true
}

// View is the list of node indexes the model reads when rendering from
// head: [root…, S, kept tail…] when the active summary applies, otherwise
// the raw spine. raw ignores summaries (the pre-compaction view).
func (g *Graph) View(head int, raw bool) ([]int, Substitution) {
	spine := g.Spine(head)
	if raw {
		return spine, Substitution{Summary: none}
	}
	sub := g.Substitute(spine)
	if sub.Summary < 0 {
		return spine, sub
	}
	out := make([]int, 0, len(spine)-sub.Len+1)
	out = append(out, spine[:sub.At]...)
	out = append(out, sub.Summary)
	out = append(out, spine[sub.At+sub.Len:]...)
	return out, sub
}

// Open reads a session directory and builds its graph, failing on the
// first parse or integrity error. The caller closes g.S. Read warnings
// (a torn last line) are in g.S.Warnings.
func Open(dir string, opts store.OpenOptions) (*Graph, error) {
	s, err := store.Open(dir, opts)
	if err != nil {
		return nil, err
	}
	g, err := Load(s)
	if err != nil {
		s.Close()
		return nil, err
	}
	return g, nil
}
