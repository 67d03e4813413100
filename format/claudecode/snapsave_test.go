package claudecode

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/gob"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
)

// snapOf is the snap save built column by column before encodePlanner
// wrote the encoding straight from the planner: the reference
// encodePlanner is held to.
func snapOf(p *planner, rest snapRest) snap {
	s := snap{Rest: rest}
	n := len(p.nodes)
	s.ID, s.Kind, s.Side = make([]string, n), make([]uint8, n), make([]bool, n)
	s.Pred, s.Caller, s.Group, s.Tal = make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n)
	s.CallsN, s.ResultsN = make([]int32, n), make([]int32, n)
	for i, nd := range p.nodes {
		s.ID[i], s.Kind[i], s.Side[i] = nd.id, nd.kind, nd.sidechain
		s.Pred[i], s.Caller[i], s.Group[i], s.Tal[i] = nd.pred, nd.caller, nd.group, nd.tail
		s.First.add(nd.first)
		if nd.more != nil {
			for _, m := range *nd.more {
				s.MoreOf = append(s.MoreOf, int32(i))
				s.More.add(m)
			}
		}
		s.CallsN[i], s.ResultsN[i] = int32(len(nd.calls)), int32(len(nd.results))
		s.CallIDs = append(s.CallIDs, nd.calls...)
		s.Results = append(s.Results, nd.results...)
		if nd.sum != nil {
			s.SumOf, s.SumLast, s.SumCont = append(s.SumOf, int32(i)), append(s.SumLast, nd.sum.last), append(s.SumCont, nd.sum.cont)
			s.SumFirst, s.SumCount = append(s.SumFirst, nd.sum.first), append(s.SumCount, int32(nd.sum.count))
			s.SumText.add(nd.sum.text)
		}
	}
	s.UUIDKeys, s.UUIDVals = sortedColumns(tableMap(p.uuidNode))
	s.SkipKeys, s.SkipVals = sortedColumns(tableMap(p.skipParent))
	s.IDKeys, _ = sortedColumns(tableMap(p.ids))
	s.MsgKeys, s.MsgVals = sortedColumns(tableMap(p.msgs))
	return s
}

// tableMap is what a keyTable holds, read without freeze: its frozen
// entries not removed, then what was set over them.
func tableMap[V any](t *keyTable[V]) map[key]V {
	m := map[key]V{}
	for i, k := range t.keys {
		if !t.gone[k] {
			m[k] = t.vals[i]
		}
	}
	for k, v := range t.set {
		m[k] = v
	}
	return m
}

func sortedColumns[V any](m map[key]V) ([]key, []V) {
	ks := slices.Sorted(func(yield func(key) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	})
	if len(ks) == 0 {
		return nil, nil // as decoded
	}
	vs := make([]V, len(ks))
	for i, k := range ks {
		vs[i] = m[k]
	}
	return ks, vs
}

// The state save writes straight from the planner decodes to the snap the
// columns held (map columns in key order), on real sessions with
// merged lines, tool calls and results, summaries and skipped lines, and
// fills exactly the buffer it sized.
func TestSaveMatchesSnap(t *testing.T) {
	srcs := []string{
		sessiontest.External(t, "claude-code", "marot-spotter", "258c7280-ae70-4798-800f-63464d01a85d.jsonl"),
		sessiontest.External(t, "claude-code", "d-kimuson-claude-code-viewer", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"),
	}
	recs, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "interop", "claude-code", "2.1.328", "*", "transcript", "*.jsonl"))
	compared := 0
	for _, src := range append(srcs, recs...) {
		if _, err := os.Stat(src); err != nil {
			continue
		}
		compared++
		p := newPlanner(context.Background(), discard{}, Options{}, nil)
		if err := p.planFile(src, false); err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		rest := snapRest{Key: p.hkey, Lines: p.lines, Head: p.head, Model: p.model, ToolNode: p.toolNode}
		b, err := encodePlanner(p, &rest)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > cap(b) || cap(b)-len(b) > 7*snapColumns {
			// planCols.size sizes the one buffer: a wrong size grows (copies) it.
			t.Errorf("%s: encodePlanner sized %d bytes and wrote %d", src, cap(b), len(b))
		}
		var got snap
		if err := got.decode(b); err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		want := snapOf(p, rest)
		// gob decodes an empty map as nil.
		got.Rest.ToolNode, want.Rest.ToolNode = nil, nil
		if len(p.nodes) == 0 || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the state written from the planner is not the snap's (%d nodes)", src, len(p.nodes))
		}
	}
	if compared < 3 {
		t.Fatalf("compared %d transcripts", compared)
	}
}

// snap.encode writes a snap column by column, as save did before
// encodePlanner: tests craft states with it (and hold encodePlanner to it).

func (w *wbuf) i32s(s []int32) {
	w.n(len(s))
	b := w.grow(4 * len(s))
	for i, v := range s {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
}

func (w *wbuf) i64s(s []int64) { putWords(w, s) }

func (w *wbuf) keys(s []key) { putWords(w, s) }

func putWords[T ~uint64 | ~int64](w *wbuf, s []T) {
	w.n(len(s))
	b := w.grow(8 * len(s))
	for i, v := range s {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
	}
}

func (w *wbuf) bytes(s []byte) { w.n(len(s)); *w = append(*w, s...) }

func (w *wbuf) strs(s []string) {
	w.n(len(s))
	for _, v := range s {
		*w = binary.LittleEndian.AppendUint32(*w, uint32(len(v)))
	}
	for _, v := range s {
		*w = append(*w, v...)
	}
}

func (w *wbuf) refs(c *refCols) { w.i32s(c.Line); w.i64s(c.Off); w.i32s(c.N) }

// colSizes is the encoded size of the columns (encode writes them in
// one buffer of that size: appending into a growing one copied the 5 MB
// state of a 100 MB session several times, docs/BENCHMARKS.md "live"),
// each column's count 8-aligned (wbuf.n).
func (s *snap) colSizes() int {
	n := len(snapMagic)
	col := func(bytes int) { n = (n+7)/8*8 + 8 + bytes }
	strs := func(ss []string) {
		b := 4 * len(ss)
		for _, v := range ss {
			b += len(v)
		}
		col(b)
	}
	refs := func(c *refCols) { col(4 * len(c.Line)); col(8 * len(c.Off)); col(4 * len(c.N)) }
	i32s := func(c []int32) { col(4 * len(c)) }
	keys := func(c []key) { col(8 * len(c)) }
	strs(s.ID)
	col(len(s.Kind))
	col(len(s.Side))
	for _, c := range [][]int32{s.Pred, s.Caller, s.Group, s.Tal} {
		i32s(c)
	}
	refs(&s.First)
	i32s(s.MoreOf)
	refs(&s.More)
	i32s(s.CallsN)
	i32s(s.ResultsN)
	strs(s.CallIDs)
	strs(s.Results)
	i32s(s.SumOf)
	i32s(s.SumLast)
	i32s(s.SumCont)
	i32s(s.SumFirst)
	i32s(s.SumCount)
	refs(&s.SumText)
	keys(s.UUIDKeys)
	i32s(s.UUIDVals)
	keys(s.SkipKeys)
	keys(s.SkipVals)
	keys(s.IDKeys)
	keys(s.MsgKeys)
	i32s(s.MsgVals)
	return n
}

func (s *snap) encode() ([]byte, error) {
	// The rest first, so the one buffer can hold everything.
	var rest bytes.Buffer
	if err := gob.NewEncoder(&rest).Encode(&s.Rest); err != nil {
		return nil, err
	}
	w := make(wbuf, 0, s.colSizes()+rest.Len())
	w = append(w, snapMagic...)
	w.strs(s.ID)
	w.bytes(s.Kind)
	side := make([]byte, len(s.Side))
	for i, b := range s.Side {
		if b {
			side[i] = 1
		}
	}
	w.bytes(side)
	for _, c := range [][]int32{s.Pred, s.Caller, s.Group, s.Tal} {
		w.i32s(c)
	}
	w.refs(&s.First)
	w.i32s(s.MoreOf)
	w.refs(&s.More)
	w.i32s(s.CallsN)
	w.i32s(s.ResultsN)
	w.strs(s.CallIDs)
	w.strs(s.Results)
	w.i32s(s.SumOf)
	w.i32s(s.SumLast)
	w.i32s(s.SumCont)
	w.i32s(s.SumFirst)
	w.i32s(s.SumCount)
	w.refs(&s.SumText)
	w.keys(s.UUIDKeys)
	w.i32s(s.UUIDVals)
	w.keys(s.SkipKeys)
	w.keys(s.SkipVals)
	w.keys(s.IDKeys)
	w.keys(s.MsgKeys)
	w.i32s(s.MsgVals)
	return append(w, rest.Bytes()...), nil
}
