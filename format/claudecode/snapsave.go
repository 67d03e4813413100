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
	"errors"
)

// planCols are the counts the encoding's columns are sized from.
type planCols struct {
	n, more, sums, calls, results int
	idBytes, callBytes, resBytes  int
}

// countCols counts the columns of p's nodes: the first len(b.ID) from
// b's columns, the rest from the planner.
func countCols(p *planner, b *snap) planCols {
	c := planCols{n: len(p.nodes), more: len(b.MoreOf), sums: len(b.SumOf), calls: len(b.CallIDs), results: len(b.Results),
		idBytes: strBytes(b.ID), callBytes: strBytes(b.CallIDs), resBytes: strBytes(b.Results)}
	for _, nd := range p.nodes[len(b.ID):] {
		c.idBytes += len(nd.id)
		if nd.more != nil {
			c.more += len(*nd.more)
		}
		if nd.sum != nil {
			c.sums++
		}
		c.calls += len(nd.calls)
		c.results += len(nd.results)
		c.callBytes += strBytes(nd.calls)
		c.resBytes += strBytes(nd.results)
	}
	return c
}

func strBytes(ss []string) int {
	n := 0
	for _, s := range ss {
		n += len(s)
	}
	return n
}

func (c planCols) size(p *planner) int {
	strs := func(k, b int) int { return 8 + 4*k + b }
	refs := func(k int) int { return 3*8 + 16*k }
	i32 := func(k int) int { return 8 + 4*k }
	words := func(k int) int { return 8 + 8*k }
	n := len(snapMagic) + strs(c.n, c.idBytes) + 2*(8+c.n) + 4*i32(c.n) + refs(c.n)
	n += i32(c.more) + refs(c.more) + 2*i32(c.n) + strs(c.calls, c.callBytes) + strs(c.results, c.resBytes)
	n += 3*i32(c.sums) + refs(c.sums)
	n += words(p.uuidNode.len()) + i32(p.uuidNode.len()) + 2*words(p.skipParent.len()) + words(p.ids.len())
	n += words(p.msgs.len()) + i32(p.msgs.len())
	// Each column's count may follow up to 7 bytes of alignment (wbuf.n).
	return n + 7*snapColumns
}

// snapColumns is how many columns a state has (counts written by wbuf.n).
const snapColumns = 31

// checkBaseRelative makes encodePlanner encode every state it writes from
// a base a second time from the planner alone and fail when the two
// differ (the package's tests set it).
var checkBaseRelative bool

// encodePlanner is snap.encode of the state save would build from p, with
// rest as its Rest. The nodes of the state p was restored from are taken
// from its columns rather than from the planner — they are what the
// planner holds, since a change to any of them loses the resume point —
// so a refresh after one turn encodes the turn's nodes, not the session's.
func encodePlanner(p *planner, rest *snapRest) ([]byte, error) {
	var gobbed bytes.Buffer
	if err := gob.NewEncoder(&gobbed).Encode(rest); err != nil {
		return nil, err
	}
	var base *snap
	if p.base != nil && p.res != nil && !p.res.lost && p.res.base.nodes == len(p.base.ID) {
		base = p.base
	} else {
		p.restoreAll()
	}
	b := encodeFrom(p, base, gobbed.Bytes())
	if base != nil && checkBaseRelative {
		// What the planner holds of the base's nodes, made from the
		// base's columns, is compared after planning changed it, if it did.
		p.restoreAll()
		if !bytes.Equal(encodeFrom(p, nil, gobbed.Bytes()), b) {
			return nil, errors.New("the state encoded from its base differs from the planner's")
		}
	}
	return b, nil
}

// encodeFrom is encodePlanner's encoding with the nodes of base (nil:
// none) taken from its columns, and the gob-encoded rest.
func encodeFrom(p *planner, base *snap, rest []byte) []byte {
	base = base.orEmpty()
	c := countCols(p, base)
	w := make(wbuf, 0, c.size(p)+len(rest))
	w = append(w, snapMagic...)
	w.nodeCols(p.nodes, base, c)
	putI32 := func(b []byte, v int32) { binary.LittleEndian.PutUint32(b, uint32(v)) }
	tableCols(&w, p.uuidNode, 4, putI32)
	tableCols(&w, p.skipParent, 8, func(b []byte, v key) { binary.LittleEndian.PutUint64(b, uint64(v)) })
	ids, _ := p.ids.freeze()
	putKeys(&w, ids)
	tableCols(&w, p.msgs, 4, putI32)
	return append(w, rest...)
}

// nodeCols writes the columns of the planned nodes and their calls,
// results, merged lines and summaries, in snap's order: each column is
// base's, then the values of the nodes after base's.
func (w *wbuf) nodeCols(nodes []*pnode, base *snap, c planCols) {
	n0 := len(base.ID)
	fresh := nodes[n0:]
	w.strsOf(c.n, c.idBytes, func(yield func(string)) {
		for _, s := range base.ID {
			yield(s)
		}
		for _, nd := range fresh {
			yield(nd.id)
		}
	})
	w.n(c.n)
	b := w.grow(c.n)
	copy(b, base.Kind)
	for i, nd := range fresh {
		b[n0+i] = nd.kind
	}
	w.n(c.n)
	b = w.grow(c.n)
	for i, v := range base.Side {
		if v {
			b[i] = 1
		}
	}
	for i, nd := range fresh {
		if nd.sidechain {
			b[n0+i] = 1
		}
	}
	w.i32Col(base.Pred, fresh, func(nd *pnode) int32 { return nd.pred })
	w.i32Col(base.Caller, fresh, func(nd *pnode) int32 { return nd.caller })
	w.i32Col(base.Group, fresh, func(nd *pnode) int32 { return nd.group })
	w.i32Col(base.Tal, fresh, func(nd *pnode) int32 { return nd.tail })
	w.refsOf(c.n, func(yield func(lineRef)) {
		base.First.each(yield)
		for _, nd := range fresh {
			yield(nd.first)
		}
	})
	w.moreCols(nodes, base, c.more)
	w.i32Col(base.CallsN, fresh, func(nd *pnode) int32 { return int32(len(nd.calls)) })
	w.i32Col(base.ResultsN, fresh, func(nd *pnode) int32 { return int32(len(nd.results)) })
	w.listCol(c.calls, c.callBytes, base.CallIDs, fresh, func(nd *pnode) []string { return nd.calls })
	w.listCol(c.results, c.resBytes, base.Results, fresh, func(nd *pnode) []string { return nd.results })
	w.sumCols(nodes, base, c.sums)
}

// listCol writes a column of k strings of total bytes: base's, then the
// list of each fresh node, one after the other.
func (w *wbuf) listCol(k, total int, base []string, fresh []*pnode, list func(*pnode) []string) {
	w.strsOf(k, total, func(yield func(string)) {
		for _, s := range base {
			yield(s)
		}
		for _, nd := range fresh {
			for _, s := range list(nd) {
				yield(s)
			}
		}
	})
}

// moreCols writes the merged lines (k of them): the node of each, then
// the lines.
func (w *wbuf) moreCols(nodes []*pnode, base *snap, k int) {
	n0 := len(base.ID)
	w.n(k)
	b := w.grow(4 * k)
	for j, i := range base.MoreOf {
		binary.LittleEndian.PutUint32(b[4*j:], uint32(i))
	}
	j := len(base.MoreOf)
	for i, nd := range nodes[n0:] {
		if nd.more != nil {
			for range *nd.more {
				binary.LittleEndian.PutUint32(b[4*j:], uint32(n0+i))
				j++
			}
		}
	}
	w.refsOf(k, func(yield func(lineRef)) {
		base.More.each(yield)
		for _, nd := range nodes[n0:] {
			if nd.more != nil {
				for _, m := range *nd.more {
					yield(m)
				}
			}
		}
	})
}

// sumCols writes the columns of the summaries among nodes (k of them).
func (w *wbuf) sumCols(nodes []*pnode, base *snap, k int) {
	sums := append(make([]int32, 0, k), base.SumOf...)
	for i, nd := range nodes[len(base.ID):] {
		if nd.sum != nil {
			sums = append(sums, int32(len(base.ID)+i))
		}
	}
	k0 := len(base.SumOf)
	w.i32sOf(k, func(j int) int32 { return sums[j] })
	w.i32sOf(k, func(j int) int32 {
		if j < k0 {
			return base.SumLast[j]
		}
		return nodes[sums[j]].sum.last
	})
	w.i32sOf(k, func(j int) int32 {
		if j < k0 {
			return base.SumCont[j]
		}
		return nodes[sums[j]].sum.cont
	})
	w.i32sOf(k, func(j int) int32 {
		if j < k0 {
			return base.SumFirst[j]
		}
		return nodes[sums[j]].sum.first
	})
	w.i32sOf(k, func(j int) int32 {
		if j < k0 {
			return base.SumCount[j]
		}
		return int32(nodes[sums[j]].sum.count)
	})
	w.refsOf(k, func(yield func(lineRef)) {
		base.SumText.each(yield)
		for _, i := range sums[k0:] {
			yield(nodes[i].sum.text)
		}
	})
}

// i32Col writes a column of 32-bit values: base's, then field of each
// fresh node.
func (w *wbuf) i32Col(base []int32, fresh []*pnode, field func(*pnode) int32) {
	w.n(len(base) + len(fresh))
	b := w.grow(4 * (len(base) + len(fresh)))
	for i, v := range base {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
	b = b[4*len(base):]
	for i, nd := range fresh {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(field(nd)))
	}
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

// tableCols writes a table as its keys column, then its values column
// (size bytes each, put by put), in key order.
func tableCols[V any](w *wbuf, t *keyTable[V], size int, put func([]byte, V)) {
	keys, vals := t.freeze()
	putKeys(w, keys)
	w.n(len(vals))
	b := w.grow(size * len(vals))
	for i, v := range vals {
		put(b[size*i:], v)
	}
}

func putKeys(w *wbuf, keys []key) {
	w.n(len(keys))
	b := w.grow(8 * len(keys))
	for i, k := range keys {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(k))
	}
}
