// This file checks the hash chain of committed bytes that session.json
// may carry (nodes_sha256, nodes_hash_state, nodes_stat: docs/FORMAT.md
// §1, "The hash chain"), so that an incremental run proves the committed
// bytes are the measured ones followed by the appended ones, reading only
// the latter. A session without the chain is checked by its seam alone.

package estimate

import (
	"crypto/sha256"
	"encoding"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
)

// chainFields are the chain's keys in session.json; they change with every
// commit, so the basis's fingerprint leaves them out.
var chainFields = []string{"nodes_sha256", "nodes_hash_state", "nodes_stat"}

// metaChain is the chain as session.json records it.
type metaChain struct {
	SHA   string     `json:"nodes_sha256"`
	State string     `json:"nodes_hash_state"`
	Stat  *chainStat `json:"nodes_stat"`
}

// chainStat is the stat of nodes.jsonl right after the commit.
type chainStat struct {
	Size    int64  `json:"size"`
	MtimeNs int64  `json:"mtime_ns"`
	CtimeNs int64  `json:"ctime_ns"`
	Dev     uint64 `json:"dev"`
	Ino     uint64 `json:"ino"`
}

func chainOf(meta []byte) metaChain {
	var c metaChain
	_ = json.Unmarshal(meta, &c)
	return c
}

// checkChain returns why the appended bytes tail cannot be taken as the
// whole change since the basis (oldState: the digest state at the
// measured length), or "". With the chain, the state extended by tail must
// give the recorded digest, and nodes.jsonl's stat must be the one
// recorded at the commit (nothing wrote it since; otherwise the full path
// hashes it and reports what changed).
func checkChain(meta []byte, oldState string, tail []byte, st os.FileInfo) string {
	c := chainOf(meta)
	switch {
	case c.SHA == "" && oldState == "":
		return ""
	case c.SHA == "" || oldState == "":
		return "the hash chain of committed bytes started or stopped"
	case c.Stat == nil || !statMatches(st, *c.Stat):
		return "nodes.jsonl was written since its last commit"
	}
	raw, err := base64.StdEncoding.DecodeString(oldState)
	if err != nil {
		return "the stored hash chain state is not readable"
	}
	h := sha256.New()
	if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(raw); err != nil {
		return "the stored hash chain state is not readable"
	}
	h.Write(tail)
	if hex.EncodeToString(h.Sum(nil)) != c.SHA {
		return "the committed bytes are not the measured ones followed by the appended ones (hash chain)"
	}
	return ""
}
