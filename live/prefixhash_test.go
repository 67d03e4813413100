package live

import (
	"crypto/sha256"
	"hash"
	"testing"
)

// BenchmarkPrefixHash: the prefix check's hash against the SHA-256 it
// replaced, over 100 MB in memory (docs/LIVE.md "The prefix check"):
//
//	go test ./live -run '^$' -bench PrefixHash -benchtime 5x
func BenchmarkPrefixHash(b *testing.B) {
	buf := make([]byte, 100<<20)
	for i := range buf {
		buf[i] = byte(i*7 + i>>9)
	}
	for _, c := range []struct {
		name string
		new  func() hash.Hash
	}{{"sha256", sha256.New}, {"xxh64", newPrefixHash}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				h := c.new()
				for off := 0; off < len(buf); off += hashBuf {
					h.Write(buf[off:min(off+hashBuf, len(buf))])
				}
				_ = h.Sum(nil)
			}
		})
	}
}

// TestPrefixHashSeesEveryByte: a change of any one byte of the prefix,
// at its start, middle or end, changes the hash (the check the cache
// relies on; docs/LIVE.md).
func TestPrefixHashSeesEveryByte(t *testing.T) {
	buf := make([]byte, 3<<20+17)
	for i := range buf {
		buf[i] = byte(i)
	}
	sum := func() string { h := newPrefixHash(); h.Write(buf); return string(h.Sum(nil)) }
	base := sum()
	for _, at := range []int{0, 1, len(buf) / 2, hashBuf - 1, hashBuf, len(buf) - 1} {
		buf[at] ^= 1
		if sum() == base {
			t.Errorf("a flipped bit at %d left the hash unchanged", at)
		}
		buf[at] ^= 1
	}
}
