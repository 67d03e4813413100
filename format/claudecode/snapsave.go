package claudecode

// Saving the planner state (snapshot.go) straight from the planner into
// snap's encoding (snapcodec.go): building the snap's columns first took
// about 4 MB more of fresh memory at every refresh of a 100 MB session,
// and in a short process fresh memory is page faults (docs/BENCHMARKS.md,
// "step 3: the refresh after one turn"). The bytes decode to the snap
// the columns would have held (TestSaveMatchesSnap).

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
)

// planCols are the counts the encoding's columns are sized from.
type planCols struct {
	n, more, sums, calls, results int
	idBytes, callBytes, resBytes  int
}

func countCols(p *planner) planCols {
	c := planCols{n: len(p.nodes)}
	for _, nd := range p.nodes {
		c.idBytes += len(nd.id)
		if nd.more != nil {
			c.more += len(*nd.more)
		}
		if nd.sum != nil {
			c.sums++
		}
		c.calls += len(nd.calls)
		c.results += len(nd.results)
		for _, s := range nd.calls {
			c.callBytes += len(s)
		}
		for _, s := range nd.results {
			c.resBytes += len(s)
		}
	}
	return c
}

func (c planCols) size(p *planner) int {
	strs := func(k, b int) int { return 8 + 4*k + b }
	refs := func(k int) int { return 3*8 + 16*k }
	i32 := func(k int) int { return 8 + 4*k }
	words := func(k int) int { return 8 + 8*k }
	n := len(snapMagic) + strs(c.n, c.idBytes) + 2*(8+c.n) + 4*i32(c.n) + refs(c.n)
	n += i32(c.more) + refs(c.more) + 2*i32(c.n) + strs(c.calls, c.callBytes) + strs(c.results, c.resBytes)
	n += 3*i32(c.sums) + refs(c.sums)
	n += words(len(p.uuidNode)) + i32(len(p.uuidNode)) + 2*words(len(p.skipParent)) + words(len(p.ids))
	n += words(len(p.msgs)) + i32(len(p.msgs))
	return n
}

// encodePlanner is snap.encode of the state save would build from p, with
// rest as its Rest.
func encodePlanner(p *planner, rest *snapRest) ([]byte, error) {
	var gobbed bytes.Buffer
	if err := gob.NewEncoder(&gobbed).Encode(rest); err != nil {
		return nil, err
	}
	c := countCols(p)
	w := make(wbuf, 0, c.size(p)+gobbed.Len())
	w = append(w, snapMagic...)
	w.nodeCols(p.nodes, c)
	mapCols(&w, p.uuidNode, 4, func(b []byte, v int32) { binary.LittleEndian.PutUint32(b, uint32(v)) })
	mapCols(&w, p.skipParent, 8, func(b []byte, v key) { binary.LittleEndian.PutUint64(b, uint64(v)) })
	w.n(len(p.ids))
	b := w.grow(8 * len(p.ids))
	k := 0
	for id := range p.ids {
		binary.LittleEndian.PutUint64(b[8*k:], uint64(id))
		k++
	}
	mapCols(&w, p.msgs, 4, func(b []byte, v int32) { binary.LittleEndian.PutUint32(b, uint32(v)) })
	return append(w, gobbed.Bytes()...), nil
}

// nodeCols writes the columns of the planned nodes and their calls,
// results, merged lines and summaries, in snap's order.
func (w *wbuf) nodeCols(nodes []*pnode, c planCols) {
	w.strsOf(c.n, c.idBytes, func(yield func(string)) {
		for _, nd := range nodes {
			yield(nd.id)
		}
	})
	w.n(c.n)
	b := w.grow(c.n)
	for i, nd := range nodes {
		b[i] = nd.kind
	}
	w.n(c.n)
	b = w.grow(c.n)
	for i, nd := range nodes {
		if nd.sidechain {
			b[i] = 1
		}
	}
	for _, field := range []func(*pnode) int32{
		func(nd *pnode) int32 { return nd.pred },
		func(nd *pnode) int32 { return nd.caller },
		func(nd *pnode) int32 { return nd.group },
		func(nd *pnode) int32 { return nd.tail },
	} {
		w.i32sOf(c.n, func(i int) int32 { return field(nodes[i]) })
	}
	w.refsOf(c.n, func(yield func(lineRef)) {
		for _, nd := range nodes {
			yield(nd.first)
		}
	})
	w.n(c.more)
	b = w.grow(4 * c.more)
	k := 0
	for i, nd := range nodes {
		if nd.more != nil {
			for range *nd.more {
				binary.LittleEndian.PutUint32(b[4*k:], uint32(i))
				k++
			}
		}
	}
	w.refsOf(c.more, func(yield func(lineRef)) {
		for _, nd := range nodes {
			if nd.more != nil {
				for _, m := range *nd.more {
					yield(m)
				}
			}
		}
	})
	w.i32sOf(c.n, func(i int) int32 { return int32(len(nodes[i].calls)) })
	w.i32sOf(c.n, func(i int) int32 { return int32(len(nodes[i].results)) })
	w.strsOf(c.calls, c.callBytes, func(yield func(string)) {
		for _, nd := range nodes {
			for _, s := range nd.calls {
				yield(s)
			}
		}
	})
	w.strsOf(c.results, c.resBytes, func(yield func(string)) {
		for _, nd := range nodes {
			for _, s := range nd.results {
				yield(s)
			}
		}
	})
	w.sumCols(nodes, c.sums)
}

// sumCols writes the columns of the summaries among nodes (k of them).
func (w *wbuf) sumCols(nodes []*pnode, k int) {
	sums := make([]int32, 0, k)
	for i, nd := range nodes {
		if nd.sum != nil {
			sums = append(sums, int32(i))
		}
	}
	w.i32sOf(k, func(j int) int32 { return sums[j] })
	w.i32sOf(k, func(j int) int32 { return nodes[sums[j]].sum.last })
	w.i32sOf(k, func(j int) int32 { return nodes[sums[j]].sum.cont })
	w.refsOf(k, func(yield func(lineRef)) {
		for _, i := range sums {
			yield(nodes[i].sum.text)
		}
	})
}

// strsOf writes a column of k strings of total bytes, given in order by
// each (called twice: lengths, then bytes).
func (w *wbuf) strsOf(k, total int, each func(yield func(string))) {
	w.n(k)
	lens := w.grow(4 * k)
	i := 0
	each(func(s string) {
		binary.LittleEndian.PutUint32(lens[4*i:], uint32(len(s)))
		i++
	})
	data := w.grow(total)[:0]
	each(func(s string) { data = append(data, s...) })
}

func (w *wbuf) i32sOf(k int, at func(int) int32) {
	w.n(k)
	b := w.grow(4 * k)
	for i := range k {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(at(i)))
	}
}

// refsOf writes k line references, given in order by each, as refCols
// (lines, offsets, lengths).
func (w *wbuf) refsOf(k int, each func(yield func(lineRef))) {
	w.n(k)
	lines := w.grow(4 * k)
	w.n(k)
	offs := w.grow(8 * k)
	w.n(k)
	ns := w.grow(4 * k)
	i := 0
	each(func(r lineRef) {
		binary.LittleEndian.PutUint32(lines[4*i:], uint32(r.line))
		binary.LittleEndian.PutUint64(offs[8*i:], uint64(r.off))
		binary.LittleEndian.PutUint32(ns[4*i:], uint32(r.n))
		i++
	})
}

// mapCols writes a map as its keys column, then its values column (size
// bytes each, put by put), in one pass: two ranges over a map need not
// visit it in the same order.
func mapCols[V any](w *wbuf, m map[key]V, size int, put func([]byte, V)) {
	w.n(len(m))
	keys := w.grow(8 * len(m))
	w.n(len(m))
	vals := w.grow(size * len(m))
	i := 0
	for k, v := range m {
		binary.LittleEndian.PutUint64(keys[8*i:], uint64(k))
		put(vals[size*i:], v)
		i++
	}
}
