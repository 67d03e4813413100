package store

import (
	"crypto/rand"
	"encoding/binary"
	"unsafe"
)

// idTable finds a node index by id. It is an open-addressing hash table of
// node indexes whose keys are the ids already in the session's arena, so
// an id is stored once and a slot costs 4 bytes: a tenth of a Go map keyed
// by a copy of the id, and nothing in it for the garbage collector to scan.
//
// Its hash is seeded but deterministic (idHash), unlike hash/maphash's
// per-process seeds: the index snapshot stores the table as it is, with
// its seed, and a later process finds ids in it (snapshot.go).
type idTable struct {
	seed  uint64
	slots []int32 // node index + 1; 0 is an empty slot
	used  int
}

// reserve sizes the table for n ids without growing.
func (t *idTable) reserve(s *Session, n int) {
	size := 16
	for size*3 < n*4 { // load ≤ 3/4
		size *= 2
	}
	if size > len(t.slots) {
		t.rehash(s, size)
	}
}

func (t *idTable) rehash(s *Session, size int) {
	if t.slots == nil {
		t.seed = newSeed()
	}
	old := t.slots
	t.slots = make([]int32, size)
	clear(t.slots) // written before probed: see estimate's newRankMap
	mask := uint64(size - 1)
	for _, v := range old {
		if v == 0 {
			continue
		}
		p := idHash(t.seed, s.ID(int(v-1))) & mask
		for t.slots[p] != 0 {
			p = (p + 1) & mask
		}
		t.slots[p] = v
	}
}

// find returns the index of the record with the given id.
func (t *idTable) find(s *Session, id string) (int32, bool) {
	if t.used == 0 {
		return 0, false
	}
	mask := uint64(len(t.slots) - 1)
	for p := idHash(t.seed, id) & mask; ; p = (p + 1) & mask {
		v := t.slots[p]
		if v == 0 {
			return 0, false
		}
		if s.ID(int(v-1)) == id {
			return v - 1, true
		}
	}
}

// insert adds node i, whose id must not be in the table yet.
func (t *idTable) insert(s *Session, i int32) {
	if (t.used+1)*4 > len(t.slots)*3 {
		t.rehash(s, max(16, 2*len(t.slots)))
	}
	mask := uint64(len(t.slots) - 1)
	p := idHash(t.seed, s.ID(int(i))) & mask
	for t.slots[p] != 0 {
		p = (p + 1) & mask
	}
	t.slots[p] = i + 1
	t.used++
}

func newSeed() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on supported platforms
	return binary.LittleEndian.Uint64(b[:])
}

// idHash is a seeded 64-bit string hash: eight bytes at a time through a
// bijective mixer (murmur3's finalizer), so equal-length ids differ in
// every word they differ in, and the seed (random per index) keeps a
// crafted set of ids from colliding by design.
func idHash(seed uint64, s string) uint64 {
	h := seed ^ uint64(len(s))*0x9e3779b97f4a7c15
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	for len(b) >= 8 {
		h = mix64(h ^ binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	var tail uint64
	for i, c := range b {
		tail |= uint64(c) << (8 * i)
	}
	return mix64(h ^ tail ^ uint64(len(b))<<56)
}

func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}
