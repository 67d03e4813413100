package claudecode

// The encoding of a saved planner state (snapshot.go): a magic, the node
// and index columns as length-prefixed little-endian arrays, then the
// small rest in gob. Decoding checks every length against what is left,
// so a damaged file is an error (ErrCannotResume), never a panic or a
// huge allocation.

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"slices"
	"unsafe"
)

const snapMagic = "ctxfold-cc-resume-1\n"

type wbuf []byte

func (w *wbuf) n(n int) { *w = binary.LittleEndian.AppendUint64(*w, uint64(n)) }

// grow extends w by n bytes and returns them: the columns are written
// in place rather than appended value by value (encode sizes w first).
func (w *wbuf) grow(n int) []byte {
	*w = slices.Grow(*w, n)
	at := len(*w)
	*w = (*w)[:at+n]
	return (*w)[at:]
}

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
// state of a 100 MB session several times, docs/BENCHMARKS.md "live").
func (s *snap) colSizes() int {
	strs := func(ss []string) int {
		n := 8 + 4*len(ss)
		for _, v := range ss {
			n += len(v)
		}
		return n
	}
	refs := func(c *refCols) int { return 3*8 + 4*len(c.Line) + 8*len(c.Off) + 4*len(c.N) }
	n := len(snapMagic) + strs(s.ID) + strs(s.CallIDs) + strs(s.Results) + 2*8 + len(s.Kind) + len(s.Side)
	n += refs(&s.First) + refs(&s.More) + refs(&s.SumText)
	for _, c := range [][]int32{s.Pred, s.Caller, s.Group, s.Tal, s.MoreOf, s.CallsN, s.ResultsN, s.SumOf, s.SumLast, s.SumCont, s.UUIDVals, s.MsgVals} {
		n += 8 + 4*len(c)
	}
	for _, c := range [][]key{s.UUIDKeys, s.SkipKeys, s.SkipVals, s.IDKeys, s.MsgKeys} {
		n += 8 + 8*len(c)
	}
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

var errShort = errors.New("the saved state is cut short")

type rbuf struct {
	b   []byte
	err error
}

// n reads a count of elements of size bytes each, refusing one the rest
// of the buffer cannot hold.
func (r *rbuf) n(size int) int {
	if r.err != nil || len(r.b) < 8 {
		r.err = errShort
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	if v > uint64(len(r.b)/size) {
		r.err = errShort
		return 0
	}
	return int(v)
}

// i32s reads a column of 32-bit little-endian values (their count
// first, as r.n reads it).
func (r *rbuf) i32s() []int32 {
	n := r.n(4)
	if n == 0 {
		return nil
	}
	out, b := make([]int32, n), r.b[:4*n]
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	r.b = r.b[4*n:]
	return out
}

// words reads a column of 64-bit little-endian words as T (an id key or
// an offset).
func words[T ~uint64 | ~int64](r *rbuf) []T {
	n := r.n(8)
	if n == 0 {
		return nil
	}
	out, b := make([]T, n), r.b[:8*n]
	for i := range out {
		out[i] = T(binary.LittleEndian.Uint64(b[8*i:]))
	}
	r.b = r.b[8*n:]
	return out
}

func (r *rbuf) i64s() []int64 { return words[int64](r) }

func (r *rbuf) keys() []key { return words[key](r) }

func (r *rbuf) bytes() []byte {
	n := r.n(1)
	out := append([]byte(nil), r.b[:n]...)
	r.b = r.b[n:]
	return out
}

func (r *rbuf) strs() []string {
	n := r.n(4)
	if n == 0 {
		return nil
	}
	lens := make([]int, n)
	total := 0
	for i := range lens {
		lens[i] = int(binary.LittleEndian.Uint32(r.b[4*i:]))
		total += lens[i]
	}
	r.b = r.b[4*n:]
	if total > len(r.b) {
		r.err = errShort
		return nil
	}
	// The strings are slices of the state's own bytes, not a copy (2.5 MB
	// for a 100 MB session, at every refresh): decode's caller does not
	// change the state while the snap or a planner restored from it is
	// used (snap.decode).
	all := unsafe.String(unsafe.SliceData(r.b), total)
	r.b = r.b[total:]
	out := make([]string, n)
	at := 0
	for i, l := range lens {
		out[i] = all[at : at+l]
		at += l
	}
	return out
}

func (r *rbuf) refs(c *refCols) { c.Line, c.Off, c.N = r.i32s(), r.i64s(), r.i32s() }

// decode reads a saved state. The snap's strings share b's bytes: b must
// not change while the snap, or a planner restored from it, is in use
// (resume states are read once and only read).
func (s *snap) decode(b []byte) error {
	if !bytes.HasPrefix(b, []byte(snapMagic)) {
		return errors.New("not a saved Claude Code import state")
	}
	r := &rbuf{b: b[len(snapMagic):]}
	s.ID = r.strs()
	s.Kind = r.bytes()
	side := r.bytes()
	s.Side = make([]bool, len(side))
	for i, v := range side {
		s.Side[i] = v == 1
	}
	s.Pred, s.Caller, s.Group, s.Tal = r.i32s(), r.i32s(), r.i32s(), r.i32s()
	r.refs(&s.First)
	s.MoreOf = r.i32s()
	r.refs(&s.More)
	s.CallsN, s.ResultsN = r.i32s(), r.i32s()
	s.CallIDs, s.Results = r.strs(), r.strs()
	s.SumOf, s.SumLast, s.SumCont = r.i32s(), r.i32s(), r.i32s()
	r.refs(&s.SumText)
	s.UUIDKeys, s.UUIDVals = r.keys(), r.i32s()
	s.SkipKeys, s.SkipVals = r.keys(), r.keys()
	s.IDKeys = r.keys()
	s.MsgKeys, s.MsgVals = r.keys(), r.i32s()
	if r.err != nil {
		return r.err
	}
	return gob.NewDecoder(bytes.NewReader(r.b)).Decode(&s.Rest)
}
