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

// snapMagic names the encoding: 2 keeps the id tables in key order, 3
// starts every column's count and values at a multiple of 8 bytes, so the
// numeric columns are read in place (rbuf), 4 keeps each summary's first
// covered node and count (its covers_span, docs/FORMAT.md §4).
const snapMagic = "ctxfold-cc-resume-4\n"

type wbuf []byte

// n writes a column's count, after the zero bytes that align it.
func (w *wbuf) n(n int) {
	for len(*w)%8 != 0 {
		*w = append(*w, 0)
	}
	*w = binary.LittleEndian.AppendUint64(*w, uint64(n))
}

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

// littleEndian: the machine's numbers are laid out as the encoding's, so
// a column is its bytes, not a copy of them.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// rbuf reads the columns of a state whose first byte is 8-aligned in
// memory (snap.decode): at is how far into it b starts.
type rbuf struct {
	b   []byte
	at  int
	err error
}

func (r *rbuf) skip(k int) { r.b, r.at = r.b[k:], r.at+k }

// n reads a count of elements of size bytes each, refusing one the rest
// of the buffer cannot hold; the values that follow are 8-aligned.
func (r *rbuf) n(size int) int {
	pad := (8 - r.at%8) % 8
	if r.err != nil || len(r.b) < pad+8 {
		r.err = errShort
		return 0
	}
	r.skip(pad)
	v := binary.LittleEndian.Uint64(r.b)
	r.skip(8)
	if v > uint64(len(r.b)/size) {
		r.err = errShort
		return 0
	}
	return int(v)
}

// i32s reads a column of 32-bit little-endian values (their count
// first, as r.n reads it): the state's own bytes, not a copy.
func (r *rbuf) i32s() []int32 { return column[int32](r, 4) }

// column reads a column of n values of size bytes: in place on a
// little-endian machine, decoded into a copy on another.
func column[T ~int32 | ~int64 | ~uint64](r *rbuf, size int) []T {
	n := r.n(size)
	if n == 0 {
		return nil
	}
	b := r.b[:size*n]
	r.skip(size * n)
	if littleEndian {
		return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
	}
	out := make([]T, n)
	for i := range out {
		if size == 4 {
			out[i] = T(int32(binary.LittleEndian.Uint32(b[4*i:])))
		} else {
			out[i] = T(binary.LittleEndian.Uint64(b[8*i:]))
		}
	}
	return out
}

func (r *rbuf) i64s() []int64 { return column[int64](r, 8) }

func (r *rbuf) keys() []key { return column[key](r, 8) }

// bytes reads a column of bytes, in place.
func (r *rbuf) bytes() []byte {
	n := r.n(1)
	out := r.b[:n:n]
	r.skip(n)
	return out
}

func (r *rbuf) strs() []string {
	n := r.n(4)
	if n == 0 {
		return nil
	}
	lens := r.b[:4*n]
	total := 0
	for i := range n {
		total += int(binary.LittleEndian.Uint32(lens[4*i:]))
	}
	r.skip(4 * n)
	if total > len(r.b) {
		r.err = errShort
		return nil
	}
	// The strings are slices of the state's own bytes, not a copy (2.5 MB
	// for a 100 MB session, at every refresh): decode's caller does not
	// change the state while the snap or a planner restored from it is
	// used (snap.decode).
	all := unsafe.String(unsafe.SliceData(r.b), total)
	r.skip(total)
	out := make([]string, n)
	at := 0
	for i := range out {
		l := int(binary.LittleEndian.Uint32(lens[4*i:]))
		out[i] = all[at : at+l]
		at += l
	}
	return out
}

func (r *rbuf) refs(c *refCols) { c.Line, c.Off, c.N = r.i32s(), r.i64s(), r.i32s() }

// decode reads a saved state. The snap's columns and strings are b's
// bytes: b must not change while the snap, or a planner restored from
// it, is in use (resume states are read once and only read).
func (s *snap) decode(b []byte) error {
	if !bytes.HasPrefix(b, []byte(snapMagic)) {
		return errors.New("not a saved Claude Code import state")
	}
	if uintptr(unsafe.Pointer(unsafe.SliceData(b)))%8 != 0 {
		// Columns are read in place only from 8-aligned memory (a Go
		// allocation of 8 bytes or more is).
		aligned := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(make([]uint64, (len(b)+7)/8)))), len(b))
		copy(aligned, b)
		b = aligned
	}
	r := &rbuf{b: b}
	r.skip(len(snapMagic))
	s.ID = r.strs()
	s.Kind = r.bytes()
	side := r.bytes()
	for _, v := range side {
		if v > 1 {
			return errors.New("a sidechain flag is neither 0 nor 1")
		}
	}
	// 0 and 1 are false and true.
	s.Side = unsafe.Slice((*bool)(unsafe.Pointer(unsafe.SliceData(side))), len(side))
	s.Pred, s.Caller, s.Group, s.Tal = r.i32s(), r.i32s(), r.i32s(), r.i32s()
	r.refs(&s.First)
	s.MoreOf = r.i32s()
	r.refs(&s.More)
	s.CallsN, s.ResultsN = r.i32s(), r.i32s()
	s.CallIDs, s.Results = r.strs(), r.strs()
	s.SumOf, s.SumLast, s.SumCont = r.i32s(), r.i32s(), r.i32s()
	s.SumFirst, s.SumCount = r.i32s(), r.i32s()
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
