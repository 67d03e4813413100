package claudecode

import (
	"crypto/rand"
	"encoding/binary"
	"unsafe"

	"github.com/dchest/siphash"
)

// The planner keys its uuid index by a keyed hash so a crafted input
// cannot aim for collisions. It is SipHash-2-4 rather than hash/maphash
// because a resumable import (resume.go) saves the index and a later run
// must hash the same uuids to the same keys: a maphash seed cannot be
// saved, a SipHash key can. The hash is github.com/dchest/siphash's (with
// an assembly version on amd64), not one of ours.

// hashKey is a SipHash-2-4 key.
type hashKey [2]uint64

func newHashKey() hashKey {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hashKey{binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])}
}

// sum64 is SipHash-2-4 of s under k. The string's bytes are passed
// without a copy: siphash.Hash only reads them and does not keep them
// (go:noescape), and a uuid is past the 32 bytes a conversion could
// place on the stack — a copy would allocate for every uuid hashed.
func (k hashKey) sum64(s string) uint64 {
	return siphash.Hash(k[0], k[1], unsafe.Slice(unsafe.StringData(s), len(s)))
}
