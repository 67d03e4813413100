package claudecode

import (
	"crypto/rand"
	"encoding/binary"
	"math/bits"
)

// The planner keys its uuid index by a keyed hash so a crafted input
// cannot aim for collisions. It is SipHash-2-4 rather than hash/maphash
// because a resumable import (resume.go) saves the index and a later run
// must hash the same uuids to the same keys: a maphash seed cannot be
// saved, a SipHash key can.

// hashKey is a SipHash-2-4 key.
type hashKey [2]uint64

func newHashKey() hashKey {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hashKey{binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])}
}

// sum64 is SipHash-2-4 of s under k.
func (k hashKey) sum64(s string) uint64 {
	v0 := k[0] ^ 0x736f6d6570736575
	v1 := k[1] ^ 0x646f72616e646f6d
	v2 := k[0] ^ 0x6c7967656e657261
	v3 := k[1] ^ 0x7465646279746573
	round := func() {
		v0 += v1
		v1 = bits.RotateLeft64(v1, 13)
		v1 ^= v0
		v0 = bits.RotateLeft64(v0, 32)
		v2 += v3
		v3 = bits.RotateLeft64(v3, 16)
		v3 ^= v2
		v0 += v3
		v3 = bits.RotateLeft64(v3, 21)
		v3 ^= v0
		v2 += v1
		v1 = bits.RotateLeft64(v1, 17)
		v1 ^= v2
		v2 = bits.RotateLeft64(v2, 32)
	}
	n := len(s)
	for len(s) >= 8 {
		m := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		v3 ^= m
		round()
		round()
		v0 ^= m
		s = s[8:]
	}
	last := uint64(n) << 56
	for i := range len(s) {
		last |= uint64(s[i]) << (8 * i)
	}
	v3 ^= last
	round()
	round()
	v0 ^= last
	v2 ^= 0xff
	round()
	round()
	round()
	round()
	return v0 ^ v1 ^ v2 ^ v3
}
