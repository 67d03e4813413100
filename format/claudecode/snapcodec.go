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

// snapMagic names the encoding: 2 keeps the id tables in key order.
const snapMagic = "ctxfold-cc-resume-2\n"

type wbuf []byte

func (w *wbuf) n(n int) { *w = binary.LittleEndian.AppendUint64(*w, uint64(n)) }

// grow extends w by n bytes and returns them: the columns are written
// in place rather than appended value by value (encodePlanner sizes w
// first).
func (w *wbuf) grow(n int) []byte {
	*w = slices.Grow(*w, n)
	at := len(*w)
	*w = (*w)[:at+n]
	return (*w)[at:]
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
