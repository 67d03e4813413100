package live

import (
	"hash"

	"github.com/cespare/xxhash/v2"
)

// newPrefixHash is the hash that proves the consumed prefix of a
// transcript file unchanged (state.json's prefix_xxh64).
//
// The threat model decides it (docs/LIVE.md, "The prefix check"): the
// cache guards against edits of the user's own file — a client rewriting
// its transcript, an editor, a truncation, a restored backup — not
// against an attacker who can write the file (such a one could as well
// write the cache). So the hash needs to catch accidental changes, not to
// resist crafted collisions: XXH64 at memory speed (about 10× SHA-256
// with SHA-NI here; docs/BENCHMARKS.md) in place of SHA-256, whose cost
// was the floor under every refresh of a large file. The size is compared
// besides, and the file's own lines are parsed from the resume point on.
func newPrefixHash() hash.Hash { return xxhash.New() }
