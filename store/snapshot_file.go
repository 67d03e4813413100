// The index snapshot (docs/FORMAT.md §1, "The index snapshot"): the
// in-memory index of the first covered bytes of nodes.jsonl, laid out as
// the index holds it in memory, so that a later open maps it instead of
// indexing those bytes again. This file is its layout; snapshot_write.go
// writes it, snapshot_load.go checks and maps it.

package store

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"unsafe"
)

// SnapshotFile is the index snapshot inside a session's cache/ folder:
// safe to delete, never followed through a symlink, rewritten whole.
const SnapshotFile = "cache/index.snap"

// Snapshot knobs (variables so that tests can make them small).
var (
	// snapshotMin: a session whose committed bytes are fewer is indexed
	// whole (milliseconds) and keeps no snapshot.
	snapshotMin int64 = 4 << 20
	// snapshotDelta: a writer rewrites the snapshot once this many bytes
	// were committed after the bytes it covers. Each open indexes at most
	// about this much afresh; rewrites (O(N)) come once per this many
	// bytes appended.
	snapshotDelta int64 = 4 << 20
	// snapshotRewindDelta is snapshotDelta for the rewind of a cache
	// session (RewindCache): a live refresh opens the session three times
	// (the rewind, the import, the command), each indexing what the
	// snapshot does not cover, and the cut is the one point a snapshot
	// survives the next rewind from (one written at the end of the import
	// covers bytes the next rewind cuts, so it is dropped there).
	snapshotRewindDelta int64 = 256 << 10
)

const (
	snapMagic   = "ctxfidx\x01"
	snapVersion = 4
	snapPage    = 4096
	// snapEndian is stored little-endian; a big-endian reader sees it
	// reversed and rejects the snapshot (its sections are native words).
	snapEndian = 0x01020304
)

// The snapshot's sections, in file order.
const (
	secRecs      = iota // []refRec
	secIDs              // the id arena
	secSlots            // the id table, []int32
	secPoolEnds         // []uint32: where each tool id ends in secPoolBytes
	secPoolBytes        // tool ids back to back
	secNames            // []nameRec
	secNameArena        // the names' bytes
	secSide             // covers, big counts, dangling links, duplicates, spans
	numSections
)

const (
	snapSound uint32 = 1 << iota
	snapUnterminated
)

// snapHeader is the first page of the snapshot.
type snapHeader struct {
	flags uint32
	// covered is how many committed bytes of nodes.jsonl the index holds;
	// chain is the digest state after them (nodehash.go).
	covered int64
	chain   [hashStateLen]byte
	// longest is the longest line among them, so that a reader with a
	// lower --max-line-bytes indexes afresh and gets its error.
	longest int64
	nrecs   int64
	npool   int64
	used    int64
	seed    uint64
	secOff  [numSections]int64
	secLen  [numSections]int64
	secCRC  [numSections]uint32
}

// snapHeaderBytes is the encoded header before its own CRC.
const snapHeaderBytes = 8 + 4 + 4 + 4 + 4 + 8 + hashStateLen + 8*6 + numSections*(8+8+4)

// snapCRC is CRC-32 (IEEE): the fastest checksum of the standard library
// on amd64 and arm64, and the check reads the whole snapshot per open.
var snapCRC = crc32.IEEETable

func (h *snapHeader) encode() []byte {
	b := make([]byte, 0, snapPage)
	b = append(b, snapMagic...)
	b = binary.LittleEndian.AppendUint32(b, snapVersion)
	b = binary.LittleEndian.AppendUint32(b, uint32(unsafe.Sizeof(refRec{})))
	b = binary.LittleEndian.AppendUint32(b, snapEndian)
	b = binary.LittleEndian.AppendUint32(b, h.flags)
	b = binary.LittleEndian.AppendUint64(b, uint64(h.covered))
	b = append(b, h.chain[:]...)
	for _, v := range []int64{h.longest, h.nrecs, h.npool, h.used, int64(h.seed), 0} {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	for i := range numSections {
		b = binary.LittleEndian.AppendUint64(b, uint64(h.secOff[i]))
		b = binary.LittleEndian.AppendUint64(b, uint64(h.secLen[i]))
		b = binary.LittleEndian.AppendUint32(b, h.secCRC[i])
	}
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, snapCRC))
	return b[:snapPage]
}

var errBadSnapshot = errors.New("not a valid index snapshot")

func decodeSnapHeader(b []byte) (snapHeader, error) {
	var h snapHeader
	if len(b) < snapHeaderBytes+4 || string(b[:8]) != snapMagic ||
		binary.LittleEndian.Uint32(b[snapHeaderBytes:]) != crc32.Checksum(b[:snapHeaderBytes], snapCRC) {
		return h, errBadSnapshot
	}
	le := binary.LittleEndian
	if le.Uint32(b[8:]) != snapVersion || le.Uint32(b[12:]) != uint32(unsafe.Sizeof(refRec{})) || le.Uint32(b[16:]) != snapEndian {
		return h, errBadSnapshot
	}
	h.flags = le.Uint32(b[20:])
	h.covered = int64(le.Uint64(b[24:]))
	at := 32
	copy(h.chain[:], b[at:at+hashStateLen])
	at += hashStateLen
	next := func() int64 {
		v := int64(le.Uint64(b[at:]))
		at += 8
		return v
	}
	h.longest, h.nrecs, h.npool, h.used = next(), next(), next(), next()
	h.seed = uint64(next())
	next()
	for i := range numSections {
		h.secOff[i], h.secLen[i] = next(), next()
		h.secCRC[i] = le.Uint32(b[at:])
		at += 4
	}
	return h, nil
}

func snapshotPath(dir string) string { return filepath.Join(dir, SnapshotFile) }

// openSnapshot opens the snapshot for reading without following a
// symlink or blocking on a FIFO; anything but a regular file is refused.
func openSnapshot(dir string) (*os.File, error) {
	cache := filepath.Join(dir, filepath.Dir(SnapshotFile))
	if st, err := os.Lstat(cache); err != nil || !st.IsDir() {
		return nil, errBadSnapshot
	}
	return openRegularNoFollow(snapshotPath(dir), true)
}

// readSnapHeader reads and checks the header of dir's snapshot.
func readSnapHeader(dir string) (snapHeader, *os.File, error) {
	f, err := openSnapshot(dir)
	if err != nil {
		return snapHeader{}, nil, err
	}
	page := make([]byte, snapPage)
	if _, err := io.ReadFull(f, page); err != nil {
		f.Close()
		return snapHeader{}, nil, errBadSnapshot
	}
	h, err := decodeSnapHeader(page)
	if err != nil {
		f.Close()
		return h, nil, err
	}
	return h, f, nil
}

// dropSnapshot removes the index snapshot; a missing one is fine.
func dropSnapshot(dir string) { _ = os.Remove(snapshotPath(dir)) }

// snapshotCovers reports whether dir's snapshot covers at most cut bytes,
// so a rewind to cut keeps it usable.
func snapshotCovers(dir string, cut int64) bool {
	h, f, err := readSnapHeader(dir)
	if err != nil {
		return false
	}
	f.Close()
	return h.covered <= cut
}
