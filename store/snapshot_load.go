package store

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"unsafe"

	"github.com/ctxfold/ctxfold/transcript"
)

// OpenStats says how Open built a session's index (tests and benchmarks
// read it; nothing decides on it).
type OpenStats struct {
	// Snapshot: the index of the first Covered committed bytes came from
	// the index snapshot; Delta bytes after them were indexed from
	// nodes.jsonl.
	Snapshot bool
	Covered  int64
	Delta    int64
	// Rejected says why an existing snapshot was not used ("" when there
	// was none, or it was used).
	Rejected string
	// Written: the write transaction rewrote the snapshot when it ended.
	Written bool
}

// OpenStats reports how the index was built.
func (s *Session) OpenStats() OpenStats { return s.stats }

// snapshotsOff makes Open ignore snapshots (tests compare with the full
// index).
var snapshotsOff = false

// Spare room mapped after the records and the id arena, so that a
// writer's appends (at most about snapshotDelta bytes of nodes before the
// next snapshot) extend them in place.
const (
	snapSpareRecs  = 8 << 20
	snapSpareIDs   = 4 << 20
	snapSparePool  = 1 << 16
	snapSpareNames = 1 << 20
)

// fromSnapshot builds the index from the snapshot plus the committed
// bytes after it, when the snapshot is exactly of a prefix of the
// committed bytes: its digest state, extended by the bytes after it, must
// give the digest of the committed bytes (session.json's, when the file's
// stat says nothing wrote it since the commit; else the file's own). It
// reports false, with s untouched but for stats, when the snapshot is
// missing, damaged, stale or of other bytes.
func (s *Session) fromSnapshot(f *os.File, st os.FileInfo, limit int64, maxLine int) bool {
	t := &Session{Dir: s.Dir, Meta: s.Meta, openCtx: s.openCtx, transient: s.transient}
	h, reason := t.loadSnapshot(maxLine)
	if reason != "" || h == nil {
		s.stats.Rejected = reason
		return false
	}
	reject := func(why string) bool {
		s.stats.Rejected = why
		// Nothing of t reached s: its mapping goes with it.
		unmap(t.mapping)
		return false
	}
	if h.covered > limit {
		return reject("it covers more bytes than are committed")
	}
	want, _, changed, err := committedChain(s.Meta, f, st, limit)
	if err != nil || changed {
		return reject("the committed bytes changed outside ctxfold")
	}
	got, err := chainState(h.chain[:]).extend(f, h.covered, limit-h.covered)
	if err != nil || got.sum() != want.sum() {
		return reject("it is not of the committed bytes")
	}
	t.unterminated = h.flags&snapUnterminated != 0
	from := h.covered
	if t.unterminated && limit > from {
		// The covered bytes end inside their last line (a hand-written
		// file); the append after them wrote its newline first (Tx.Append),
		// which ends that line. Bytes that continue the line instead are
		// for the full index.
		var nl [1]byte
		if _, err := f.ReadAt(nl[:], from); err != nil || nl[0] != '\n' {
			return reject("the bytes after it continue its last line")
		}
		from++
		t.unterminated = false
	}
	line := t.Len() + len(t.Duplicates)
	if err := t.indexFrom(io.NewSectionReader(f, from, limit-from), from, line, indexBufSize(limit), true, maxLine); err != nil {
		// The full index reports it, with the state it would have.
		return reject("the bytes after it do not index: " + err.Error())
	}
	t.resolveLinks()
	t.chain = want
	t.stats = OpenStats{Snapshot: true, Covered: h.covered, Delta: limit - h.covered}
	t.snapSound = h.flags&snapSound != 0
	t.snapRecs = int(h.nrecs)
	t.openCtx = s.openCtx
	*s = *t
	return true
}

// loadSnapshot maps the snapshot into t's index. It returns a nil header
// and no reason when there is no snapshot, and a reason when there is one
// that cannot be used as a file (damaged, truncated, not a regular file).
func (t *Session) loadSnapshot(maxLine int) (*snapHeader, string) {
	h, f, err := readSnapHeader(t.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ""
	}
	if err != nil {
		return nil, "unreadable, not a regular file or not an index snapshot"
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !h.layoutOK(st.Size()) {
		return nil, "truncated, extended or malformed"
	}
	if h.longest > int64(maxLine) {
		return nil, "it holds a line over the line limit"
	}
	extra := [numSections]int64{secRecs: snapSpareRecs, secIDs: snapSpareIDs, secNames: snapSpareNames, secNameArena: snapSpareNames}
	secs, mapping, err := mapSections(f, &h, extra)
	if err != nil {
		return nil, "cannot map it: " + err.Error()
	}
	for i := range numSections {
		// The records' checksum is taken as they are bounds-checked
		// (recordsOK), while each chunk is in the cache.
		if i != secRecs && crc32.Checksum(secs[i], snapCRC) != h.secCRC[i] {
			unmap(mapping)
			return nil, "corrupted (a checksum differs)"
		}
	}
	if !t.installSnapshot(&h, secs) {
		unmap(mapping)
		return nil, "corrupted (its index is inconsistent)"
	}
	t.mapping = mapping
	return &h, ""
}

// layoutOK checks that the sections follow each other page by page, fill
// the file of size bytes exactly and have the sizes the counts give.
func (h *snapHeader) layoutOK(size int64) bool {
	off := int64(snapPage)
	for i := range numSections {
		if h.secOff[i] != off || h.secLen[i] < 0 || h.secLen[i] > size {
			return false
		}
		off += roundPage(h.secLen[i])
	}
	slots := h.secLen[secSlots] / 4
	return off == size && h.covered >= 0 && h.nrecs >= 0 && h.nrecs < 1<<31 && h.npool >= 0 && h.npool < 1<<31 &&
		h.secLen[secRecs] == h.nrecs*int64(unsafe.Sizeof(refRec{})) &&
		h.secLen[secPoolEnds] == 4*h.npool && h.secLen[secIDs] < 1<<32 && h.secLen[secNameArena] < 1<<32 &&
		h.secLen[secNames]%int64(unsafe.Sizeof(nameRec{})) == 0 &&
		h.secLen[secSlots]%4 == 0 && slots&(slots-1) == 0 && h.used == h.nrecs && (slots == 0) == (h.nrecs == 0) &&
		4*h.used <= 3*slots
}

// installSnapshot points t's index at the mapped sections and decodes the
// side tables. Every record and slot is bounds-checked (a pass of
// compares, no decoding), so a snapshot that passed its checksums but was
// crafted cannot make an accessor read out of bounds.
func (t *Session) installSnapshot(h *snapHeader, secs [numSections][]byte) bool {
	n := int(h.nrecs)
	if n > 0 {
		b := secs[secRecs]
		t.recs = unsafe.Slice((*refRec)(unsafe.Pointer(&b[:1][0])), cap(b)/int(unsafe.Sizeof(refRec{})))[:n]
	}
	t.ids = secs[secIDs]
	if b := secs[secSlots]; len(b) > 0 {
		t.byID = idTable{seed: h.seed, slots: unsafe.Slice((*int32)(unsafe.Pointer(&b[0])), len(b)/4), used: int(h.used)}
	}
	pb := secs[secPoolBytes]
	ends := secs[secPoolEnds]
	t.basePool, t.poolEnds, t.poolBytes = int(h.npool), ends, pb
	t.pool = make([]string, 0, snapSparePool)
	start := uint32(0)
	for k := range t.basePool {
		end := binary.LittleEndian.Uint32(ends[4*k:])
		if end < start || int64(end) > int64(len(pb)) {
			return false
		}
		start = end
	}
	if b := secs[secNames]; len(b) > 0 {
		t.names = unsafe.Slice((*nameRec)(unsafe.Pointer(&b[:1][0])), cap(b)/int(unsafe.Sizeof(nameRec{})))[:len(b)/int(unsafe.Sizeof(nameRec{}))]
	}
	t.nameArena = secs[secNameArena]
	if !t.decodeSide(secs[secSide]) {
		return false
	}
	crc, ok := t.recordsOK(h, secs[secRecs])
	return ok && crc == h.secCRC[secRecs]
}

// recordsOK bounds-checks every record and slot against the arenas, and
// returns the CRC of raw, the records' bytes, taken chunk by chunk.
func (t *Session) recordsOK(h *snapHeader, raw []byte) (uint32, bool) {
	n := int32(len(t.recs))
	const chunk = 1024
	size := int(unsafe.Sizeof(refRec{}))
	var crc uint32
	nids, npool, covered := int64(len(t.ids)), int64(t.poolLen()), h.covered
	for i := range t.recs {
		if i%chunk == 0 {
			crc = crc32.Update(crc, snapCRC, raw[i*size:min(i+chunk, len(t.recs))*size])
		}
		r := &t.recs[i]
		calls, results := int64(r.nCalls), int64(r.nResults)
		if r.nCalls == manyIDs || r.nResults == manyIDs {
			big, ok := t.bigCounts[int32(i)]
			if !ok || big[0] < 0 || big[1] < 0 {
				return 0, false
			}
			calls, results = int64(big[0]), int64(big[1])
		}
		if int64(r.idOff)+int64(r.idLen) > nids || r.idLen == 0 ||
			r.pred < MissingLink || r.pred >= n || r.caller < MissingLink || r.caller >= n ||
			r.pool < 0 || int64(r.pool)+calls+results > npool ||
			int(r.role) >= len(roleNames) || r.offset < 0 || r.length < 0 || r.offset+int64(r.length) > covered {
			return 0, false
		}
	}
	last := int32(-1)
	for _, r := range t.names {
		if r.node <= last || r.node >= n || int64(r.off)+int64(r.n) > int64(len(t.nameArena)) || r.n == 0 {
			return 0, false
		}
		last = r.node
	}
	// Exactly used slots are taken, so a probe always ends at an empty one.
	taken := 0
	for _, v := range t.byID.slots {
		if v < 0 || v > n {
			return 0, false
		}
		if v != 0 {
			taken++
		}
	}
	return crc, taken == t.byID.used
}

// sideReader reads encodeSide's uvarints and strings; ok turns false at
// the first malformed or out-of-range one.
type sideReader struct {
	b  []byte
	n  int // records: an index must be below it
	ok bool
}

func (r *sideReader) u() int {
	v, k := binary.Uvarint(r.b)
	if k <= 0 || v > 1<<31 {
		r.ok = false
		return 0
	}
	r.b = r.b[k:]
	return int(v)
}

// count is a number of entries that follow, each at least one byte.
func (r *sideReader) count() int {
	k := r.u()
	if k > len(r.b) {
		r.ok = false
		return 0
	}
	return k
}

func (r *sideReader) str() string {
	k := r.u()
	if !r.ok || k > len(r.b) {
		r.ok = false
		return ""
	}
	v := string(r.b[:k])
	r.b = r.b[k:]
	return v
}

func (r *sideReader) idx() int32 {
	i := r.u()
	if i >= r.n {
		r.ok = false
	}
	return int32(i)
}

// decodeSide is encodeSide's inverse; it reports false on any malformed
// or out-of-range entry.
func (t *Session) decodeSide(b []byte) bool {
	r := &sideReader{b: b, n: len(t.recs), ok: true}
	for k := r.count(); k > 0 && r.ok; k-- {
		i := r.idx()
		ids := make([]string, r.count())
		for j := range ids {
			ids[j] = r.str()
		}
		if t.covers == nil {
			t.covers = map[int32][]string{}
		}
		t.covers[i] = ids
	}
	for k := r.count(); k > 0 && r.ok; k-- {
		if t.bigCounts == nil {
			t.bigCounts = map[int32][2]int32{}
		}
		i := r.idx()
		t.bigCounts[i] = [2]int32{int32(r.u()), int32(r.u())}
	}
	for k := r.count(); k > 0 && r.ok; k-- {
		if t.dangling == nil {
			t.dangling = map[int32]danglingLinks{}
		}
		i := r.idx()
		t.dangling[i] = danglingLinks{pred: r.str(), caller: r.str()}
	}
	for k := r.count(); k > 0 && r.ok; k-- {
		t.Duplicates = append(t.Duplicates, Duplicate{ID: r.str(), FirstLine: r.u(), Line: r.u()})
	}
	for k := r.count(); k > 0 && r.ok; k-- {
		if t.spans == nil {
			t.spans = map[int32]transcript.CoverSpan{}
		}
		i := r.idx()
		sp := transcript.CoverSpan{First: r.str(), Last: r.str(), Count: r.u()}
		r.ok = r.ok && sp.Valid()
		t.spans[i] = sp
	}
	return r.ok && len(r.b) == 0
}
