package store

import (
	"encoding/binary"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"unsafe"
)

// maybeSnapshot rewrites the index snapshot at the end of a write that
// left enough committed bytes after the ones the current snapshot covers
// (snapshotDelta), so that the next open maps it and indexes only what
// came after. It runs under the lock; readers never write it. A failure
// is not the write's: the snapshot is a cache, and the next write tries
// again.
func (tx *Tx) maybeSnapshot() {
	s := tx.s
	if s == nil || s.chain == nil || s.chain.length() != s.CommittedBytes || s.Meta.NodesBytes == nil || *s.Meta.NodesBytes != s.CommittedBytes {
		return
	}
	delta := snapshotDelta
	if tx.rewound && s.Meta.Cache {
		delta = snapshotRewindDelta
	}
	if s.CommittedBytes < snapshotMin || s.CommittedBytes-s.stats.Covered < delta {
		return
	}
	if err := s.writeSnapshot(); err != nil {
		return
	}
	s.stats.Written = true
	tx.stampChain()
}

// SnapshotAtCheckpoint writes the index snapshot now, in the middle of
// the transaction, when snapshotRewindDelta committed bytes lie past what
// it covers. A resumable import of a cache session calls it at its
// checkpoint, the commit the next refresh rewinds to (RewindCache): a
// snapshot written at the end of the import would cover bytes that rewind
// cuts, and be dropped there.
func (tx *Tx) SnapshotAtCheckpoint() {
	s := tx.s
	if s == nil || s.chain == nil || s.chain.length() != s.CommittedBytes || s.Meta.NodesBytes == nil || *s.Meta.NodesBytes != s.CommittedBytes {
		return
	}
	if s.CommittedBytes < snapshotMin || s.CommittedBytes-s.stats.Covered < snapshotRewindDelta {
		return
	}
	if err := s.writeSnapshot(); err != nil {
		return
	}
	s.stats.Written = true
	// What the end of the transaction measures its delta from.
	s.stats.Covered = s.CommittedBytes
	tx.stampChain()
}

// stampChain records the chain in session.json when it does not vouch for
// the committed bytes yet (a session from before the chain, or touched
// since its last commit), so that opens through the new snapshot need not
// hash the whole file. The meta is otherwise unchanged.
func (tx *Tx) stampChain() {
	s := tx.s
	if s == nil || s.f == nil || s.chain == nil || s.chain.length() != s.CommittedBytes {
		return
	}
	st, err := s.f.Stat()
	if err != nil {
		return
	}
	fp, ok := statOf(st)
	if c, trusted := metaChain(s.Meta, s.CommittedBytes); trusted && c.sum() == s.chain.sum() && ok && s.Meta.NodesStat != nil && fp == *s.Meta.NodesStat {
		return
	}
	m := s.Meta
	m.setChain(s.chain)
	m.NodesStat = nil
	if ok && fp.Size == s.CommittedBytes {
		m.NodesStat = &fp
	}
	if writeMeta(tx.dir, m) == nil {
		s.Meta = m
	}
}

// writeSnapshot writes the whole index as dir's snapshot: to a temporary
// file in cache/, renamed over the old one (never through a symlink).
func (s *Session) writeSnapshot() error {
	cache := filepath.Join(s.Dir, filepath.Dir(SnapshotFile))
	if err := os.Mkdir(cache, 0o755); err != nil && !os.IsExist(err) {
		return err
	}
	if st, err := os.Lstat(cache); err != nil || !st.IsDir() {
		return errBadSnapshot
	}
	// Room in the id table for the nodes appended before the next
	// snapshot, so a writer never grows (rehashes) a mapped table.
	s.byID.reserve(s, len(s.recs)+len(s.recs)/8+int(snapshotDelta/32))
	h, secs := s.snapSections()
	return WriteFileAtomic(snapshotPath(s.Dir), AtomicOptions{}, func(w io.Writer) error {
		if _, err := w.Write(h.encode()); err != nil {
			return err
		}
		for i, data := range secs {
			if _, err := w.Write(data); err != nil {
				return err
			}
			if pad := roundPage(h.secLen[i]) - h.secLen[i]; pad > 0 {
				if _, err := w.Write(make([]byte, pad)); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// snapSections lays the index out: each section's bytes and the header
// that describes them.
func (s *Session) snapSections() (snapHeader, [numSections][]byte) {
	var secs [numSections][]byte
	if len(s.recs) > 0 {
		secs[secRecs] = unsafe.Slice((*byte)(unsafe.Pointer(&s.recs[0])), len(s.recs)*int(unsafe.Sizeof(refRec{})))
	}
	secs[secIDs] = s.ids
	if len(s.byID.slots) > 0 {
		secs[secSlots] = unsafe.Slice((*byte)(unsafe.Pointer(&s.byID.slots[0])), 4*len(s.byID.slots))
	}
	ends := make([]byte, 0, 4*s.poolLen())
	poolBytes := make([]byte, 0, len(s.poolBytes))
	for p := range s.poolLen() {
		var id string
		if p < s.basePool {
			id = s.basePoolID(p)
		} else {
			id = s.pool[p-s.basePool]
		}
		poolBytes = append(poolBytes, id...)
		ends = binary.LittleEndian.AppendUint32(ends, uint32(len(poolBytes)))
	}
	secs[secPoolEnds], secs[secPoolBytes] = ends, poolBytes
	if len(s.names) > 0 {
		secs[secNames] = unsafe.Slice((*byte)(unsafe.Pointer(&s.names[0])), len(s.names)*int(unsafe.Sizeof(nameRec{})))
	}
	secs[secNameArena] = s.nameArena
	secs[secSide] = s.encodeSide()

	h := snapHeader{covered: s.CommittedBytes, nrecs: int64(len(s.recs)), npool: int64(s.poolLen()),
		used: int64(s.byID.used), seed: s.byID.seed, longest: s.longestLine()}
	copy(h.chain[:], s.chain)
	if s.graphSound() {
		h.flags |= snapSound
	}
	if s.unterminated {
		h.flags |= snapUnterminated
	}
	off := int64(snapPage)
	for i, data := range secs {
		h.secOff[i], h.secLen[i] = off, int64(len(data))
		h.secCRC[i] = crc32.Checksum(data, snapCRC)
		off += roundPage(int64(len(data)))
	}
	return h, secs
}

func roundPage(n int64) int64 { return (n + snapPage - 1) &^ (snapPage - 1) }

// longestLine is the longest stored line (without its newline).
func (s *Session) longestLine() int64 {
	var n int32
	for i := range s.recs {
		n = max(n, s.recs[i].length)
	}
	// A CRLF line's stored length leaves out its "\r", which the reader's
	// limit counts.
	return int64(n) + 1
}

// encodeSide encodes the index's side tables: covers, big counts,
// dangling links, duplicates and cover spans (rare, unlike names), as
// uvarints and length-prefixed strings.
func (s *Session) encodeSide() []byte {
	var b []byte
	u := func(v int) { b = binary.AppendUvarint(b, uint64(v)) }
	str := func(v string) {
		u(len(v))
		b = append(b, v...)
	}
	u(len(s.covers))
	for i, ids := range s.covers {
		u(int(i))
		u(len(ids))
		for _, id := range ids {
			str(id)
		}
	}
	u(len(s.bigCounts))
	for i, c := range s.bigCounts {
		u(int(i))
		u(int(c[0]))
		u(int(c[1]))
	}
	u(len(s.dangling))
	for i, d := range s.dangling {
		u(int(i))
		str(d.pred)
		str(d.caller)
	}
	u(len(s.Duplicates))
	for _, d := range s.Duplicates {
		str(d.ID)
		u(d.FirstLine)
		u(d.Line)
	}
	u(len(s.spans))
	for i, sp := range s.spans {
		u(int(i))
		str(sp.First)
		str(sp.Last)
		u(sp.Count)
	}
	return b
}
