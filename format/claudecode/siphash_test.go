package claudecode

import (
	"encoding/binary"
	"math/bits"
	"testing"
)

// The reference vector of the SipHash paper (key 00..0f, message 00..0e):
// the planner's keys are SipHash-2-4, not something that merely looks
// like it.
func TestSipHashVector(t *testing.T) {
	k := hashKey{0x0706050403020100, 0x0f0e0d0c0b0a0908}
	msg := make([]byte, 15)
	for i := range msg {
		msg[i] = byte(i)
	}
	if got, want := k.sum64(string(msg)), uint64(0xa129ca6149be45e5); got != want {
		t.Fatalf("sum64 = %#x, want %#x", got, want)
	}
	if got, want := k.sum64(""), uint64(0x726fdb47dd0e0e31); got != want {
		t.Fatalf("sum64(\"\") = %#x, want %#x", got, want)
	}
}

// BenchmarkSipHashUUID: the planner hashes every uuid it indexes (a
// 36-byte string) once or more per line.
func BenchmarkSipHashUUID(b *testing.B) {
	k := hashKey{0x0706050403020100, 0x0f0e0d0c0b0a0908}
	s := "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
	var sink uint64
	for b.Loop() {
		sink ^= k.sum64(s)
	}
	_ = sink
}

// The library's SipHash gives what the hand-written one gave: the
// hand-written rounds (kept here as the reference) against sum64 on
// every length from 0 to 80 bytes and random keys, so saved resume
// states keep their keys.
func TestSipHashSameAsBefore(t *testing.T) {
	for n := 0; n <= 80; n++ {
		k := newHashKey()
		msg := make([]byte, n)
		for i := range msg {
			msg[i] = byte(i*31 + n)
		}
		if got, want := k.sum64(string(msg)), referenceSipHash(k, string(msg)); got != want {
			t.Fatalf("len %d: %#x, want %#x", n, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = hashKey{1, 2}.sum64("5c0375b4-57a5-4f26-b12d-d022ee4e51b7") }); n != 0 {
		t.Errorf("sum64 allocates %v times", n)
	}
}

// referenceSipHash is the SipHash-2-4 ctxfold computed before it used
// the library (the paper's algorithm, written out).
func referenceSipHash(k hashKey, s string) uint64 {
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
		m := binary.LittleEndian.Uint64([]byte(s[:8]))
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

// BenchmarkSipHashReference is BenchmarkSipHashUUID with the reference
// rounds, to compare the two on one machine at one time.
func BenchmarkSipHashReference(b *testing.B) {
	k := hashKey{0x0706050403020100, 0x0f0e0d0c0b0a0908}
	s := "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
	var sink uint64
	for b.Loop() {
		sink ^= referenceSipHash(k, s)
	}
	_ = sink
}
