package dag

import "github.com/ctxfold/ctxfold/transcript"

// PreviousSummary is the summary that was active before summary s was
// written on its branch: the latest summary before s in file order whose
// covered segment s extends (docs/FORMAT.md §4: a re-compaction extends the
// previous segment), -1 when s was the branch's first compaction. Taking s
// back (ctxfold uncompact) makes that one active again.
func (g *Graph) PreviousSummary(s int) int {
	want := g.spanOf(s)
	if !want.Valid() {
		return -1
	}
	var covers []string // s's ids, expanded once a candidate needs them
	for j := s - 1; j >= 0; j-- {
		if !g.S.IsSummary(j) {
			continue
		}
		sp := g.spanOf(j)
		if !sp.Valid() || sp.First != want.First || sp.Count >= want.Count {
			continue
		}
		if covers == nil {
			covers = g.CoverIDs(s)
		}
		if sp.Count <= len(covers) && covers[sp.Count-1] == sp.Last {
			return j
		}
	}
	return -1
}

// spanOf is summary i's covered segment as its ends and length, whichever
// way it is stored.
func (g *Graph) spanOf(i int) transcript.CoverSpan {
	ref := g.S.Ref(i)
	if ref.CoversSpan.Valid() {
		return ref.CoversSpan
	}
	if len(ref.CoversIDs) == 0 {
		return transcript.CoverSpan{}
	}
	return transcript.SpanOf(ref.CoversIDs)
}
