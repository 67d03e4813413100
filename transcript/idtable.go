package transcript

import "hash/maphash"

// idTable finds a node index by id. It is an open-addressing hash table of
// node indexes whose keys are the ids already in the session's arena, so
// an id is stored once and a slot costs 4 bytes: a tenth of a Go map keyed
// by a copy of the id, and nothing in it for the garbage collector to scan.
type idTable struct {
	seed  maphash.Seed
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
		t.seed = maphash.MakeSeed()
	}
	old := t.slots
	t.slots = make([]int32, size)
	mask := uint64(size - 1)
	for _, v := range old {
		if v == 0 {
			continue
		}
		p := maphash.String(t.seed, s.ID(int(v-1))) & mask
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
	for p := maphash.String(t.seed, id) & mask; ; p = (p + 1) & mask {
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
	p := maphash.String(t.seed, s.ID(int(i))) & mask
	for t.slots[p] != 0 {
		p = (p + 1) & mask
	}
	t.slots[p] = i + 1
	t.used++
}
