// The hash chain of committed bytes (docs/FORMAT.md §1, "The hash
// chain"): session.json records the SHA-256 of the committed bytes of
// nodes.jsonl, the digest state that extends it, and the stat fingerprint
// of nodes.jsonl right after the commit, so the next writer extends the
// hash in O(new) and a reader tells cheaply and exactly whether anything
// outside ctxfold wrote the file since.

package store

import (
	"crypto/sha256"
	"encoding"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"

	"github.com/ctxfold/ctxfold/transcript"
)

// FileStat is the stat fingerprint of nodes.jsonl after a commit. The
// ctime changes on every write and cannot be set by a user, so an equal
// fingerprint means nothing wrote the file since (docs/FORMAT.md §1).
type FileStat struct {
	Size    int64  `json:"size"`
	MtimeNs int64  `json:"mtime_ns"`
	CtimeNs int64  `json:"ctime_ns"`
	Dev     uint64 `json:"dev"`
	Ino     uint64 `json:"ino"`
}

// hashStateLen is the length of crypto/sha256's marshalled state: magic,
// eight words, one block, the length.
const hashStateLen = 4 + 32 + 64 + 8

// chainState is a SHA-256 digest state over a prefix of nodes.jsonl.
type chainState []byte

func newChain() chainState { return marshalHash(sha256.New()) }

func marshalHash(h hash.Hash) chainState {
	b, err := h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		panic(err) // crypto/sha256's digest always marshals
	}
	return b
}

// hasher resumes the state.
func (c chainState) hasher() (hash.Hash, error) {
	h := sha256.New()
	if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(c); err != nil {
		return nil, err
	}
	return h, nil
}

// length is how many bytes the state has hashed, or -1 for a state that
// is not crypto/sha256's.
func (c chainState) length() int64 {
	if len(c) != hashStateLen || string(c[:4]) != "sha\x03" {
		return -1
	}
	return int64(binary.BigEndian.Uint64(c[len(c)-8:]))
}

// sum is the hex digest of the bytes hashed so far.
func (c chainState) sum() string {
	h, err := c.hasher()
	if err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// extend hashes n bytes of f at offset from onto the state.
func (c chainState) extend(f io.ReaderAt, from, n int64) (chainState, error) {
	h, err := c.hasher()
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(h, io.NewSectionReader(f, from, n)); err != nil {
		return nil, err
	}
	return marshalHash(h), nil
}

// extendBytes hashes data onto the state.
func (c chainState) extendBytes(data []byte) chainState {
	h, err := c.hasher()
	if err != nil {
		panic(err) // c came from marshalHash
	}
	h.Write(data)
	return marshalHash(h)
}

// metaChain is the state session.json records, when it is well formed and
// covers exactly limit bytes with the recorded digest.
func metaChain(m Meta, limit int64) (chainState, bool) {
	if m.NodesSHA256 == "" || m.NodesHashState == "" {
		return nil, false
	}
	raw, err := base64.StdEncoding.DecodeString(m.NodesHashState)
	c := chainState(raw)
	if err != nil || c.length() != limit || c.sum() != m.NodesSHA256 {
		return nil, false
	}
	return c, true
}

// setChain records the state (and its digest) in m.
func (m *Meta) setChain(c chainState) {
	m.NodesSHA256 = c.sum()
	m.NodesHashState = base64.StdEncoding.EncodeToString(c)
}

// clearChain drops the chain from m: the committed bytes were changed by
// repair, and the next write records it afresh.
func (m *Meta) clearChain() {
	m.NodesSHA256, m.NodesHashState, m.NodesStat = "", "", nil
}

// committedChain returns the digest state of the first limit bytes of f
// and whether session.json vouches for it without a re-read: its chain is
// well formed and the file's stat equals the one recorded at the commit.
// Otherwise the bytes are hashed (O(N), only after an outside touch or a
// session from before the chain), and changed reports committed bytes
// that no longer match the recorded digest.
func committedChain(m Meta, f *os.File, st os.FileInfo, limit int64) (c chainState, trusted, changed bool, err error) {
	if c, ok := metaChain(m, limit); ok && m.NodesStat != nil {
		if fp, ok := statOf(st); ok && fp == *m.NodesStat {
			return c, true, false, nil
		}
	}
	c, err = newChain().extend(f, 0, limit)
	if err != nil {
		return nil, false, false, &transcript.ParseError{File: f.Name(), Msg: "hashing the committed bytes: " + err.Error()}
	}
	changed = m.NodesSHA256 != "" && c.sum() != m.NodesSHA256 && limitMatches(m, limit)
	return c, false, changed, nil
}

// limitMatches: the recorded digest is about limit bytes (a hand-edited
// nodes_bytes that disagrees with the recorded state is not "changed
// bytes" but a changed length).
func limitMatches(m Meta, limit int64) bool {
	if m.NodesHashState == "" {
		return true
	}
	raw, err := base64.StdEncoding.DecodeString(m.NodesHashState)
	return err != nil || chainState(raw).length() == limit
}

// changedMsg is the warning when committed bytes no longer match
// nodes_sha256.
func changedMsg(limit int64) string {
	return fmt.Sprintf("the %d committed bytes no longer match nodes_sha256 in %s: they were changed outside ctxfold; the hash chain restarts from the file as it is", limit, MetaFile)
}

// CommittedBytesChanged reports whether the committed bytes of nodes.jsonl
// no longer match session.json's nodes_sha256: they were changed outside
// ctxfold (docs/FORMAT.md §1, "The hash chain"). It reads them only when
// the file's stat differs from the one recorded at the last commit; a
// session without the chain reports false.
func (s *Session) CommittedBytesChanged() (bool, error) {
	if s.f == nil || s.Meta.NodesSHA256 == "" {
		return false, nil
	}
	st, err := s.f.Stat()
	if err != nil {
		return false, fileErr(s.NodesPath(), err)
	}
	_, _, changed, err := committedChain(s.Meta, s.f, st, s.CommittedBytes)
	return changed, err
}

// ChainExtends says why the committed bytes m records are not the bytes
// the digest state fromState (a NodesHashState read at an earlier commit)
// covered followed by tail, or "" when they are: m's chain must cover
// exactly those bytes, and st — nodes.jsonl's stat now — must be the one m
// recorded at its commit, so nothing wrote the file since. A reader that
// measured the session at the earlier commit so proves, reading only
// tail, that the session only grew by it (estimate's incremental run).
// Neither m nor the earlier commit carrying a chain is "" too: such a
// session is older than the chain, and the caller relies on its own checks.
func ChainExtends(m Meta, fromState string, tail []byte, st os.FileInfo) string {
	switch {
	case m.NodesSHA256 == "" && fromState == "":
		return ""
	case m.NodesSHA256 == "" || fromState == "":
		return "the hash chain of committed bytes started or stopped"
	}
	now, ok := statOf(st)
	if !ok || m.NodesStat == nil || *m.NodesStat != now {
		return "nodes.jsonl was written since its last commit"
	}
	raw, err := base64.StdEncoding.DecodeString(fromState)
	from := chainState(raw)
	h, herr := from.hasher()
	if err != nil || herr != nil || from.length() < 0 {
		return "the stored hash chain state is not readable"
	}
	h.Write(tail)
	c, ok := metaChain(m, from.length()+int64(len(tail)))
	if !ok || hex.EncodeToString(h.Sum(nil)) != c.sum() {
		return "the committed bytes are not the measured ones followed by the appended ones (hash chain)"
	}
	return ""
}
