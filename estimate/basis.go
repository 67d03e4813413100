// This file holds what an incremental run (incremental.go) needs of the
// previous measurement of a session: the figures of its view, the state of
// its calibration, and an index of its node ids (the sidecar file).

package estimate

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/osfile"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// IncrementalFile is the sidecar of ViewCacheFile: the id, offset and
// length of every node of the measured session and the matched requests
// of its calibration, so that an incremental run checks new nodes' links
// and refits the calibration without indexing nodes.jsonl. Like the other
// caches it is safe to delete.
const IncrementalFile = "estimate.incr"

// viewState is what view measured beyond its Result.
type viewState struct {
	tally tally
	// calib is nil when calibration did not count HEAD's raw spine.
	calib *calibBasis
}

// calibBasis is the calibration's state on HEAD's raw spine (calibrate).
type calibBasis struct {
	SpineLen   int  `json:"spine_len"`
	SpineTotal int  `json:"spine_total"`
	SpineTools bool `json:"spine_tools"`
	// SpineFraming is the counted framing (overhead) of the spine's nodes.
	SpineFraming int `json:"spine_framing"`
	// Latest is the last summary in file order: the one in force for every
	// node appended after it (matchRequests).
	Latest *latestSummary `json:"latest,omitempty"`
	// Head is HEAD's state relative to the latest request (the anchor).
	Head headState `json:"head"`
	reqs []MatchedRequest
}

// latestSummary is what a request re-estimate needs of the summary in
// force: whether its segment lies on the spine (it substituted), the
// segment's end and tokens, and the summary's own count.
type latestSummary struct {
	Substitutes bool `json:"substitutes"`
	SegEnd      int  `json:"seg_end"`
	SegTokens   int  `json:"seg_tokens"`
	SegFraming  int  `json:"seg_framing"`
	Total       int  `json:"total"`
	Framing     int  `json:"framing"`
	Tools       bool `json:"tools"`
}

func newCalibBasis(g *dag.Graph, spine []int, slims []slimCount, reqs []MatchedRequest) *calibBasis {
	c := &calibBasis{SpineLen: len(spine), reqs: reqs}
	pre, preFraming := make([]int, len(spine)+1), make([]int, len(spine)+1)
	for k, i := range spine {
		pre[k+1] = pre[k] + int(slims[i].total)
		preFraming[k+1] = preFraming[k] + int(slims[i].overhead)
		c.SpineTools = c.SpineTools || slims[i].tools
	}
	c.SpineTotal, c.SpineFraming = pre[len(spine)], preFraming[len(spine)]
	for i := g.S.Len() - 1; i >= 0; i-- {
		if !g.S.IsSummary(i) {
			continue
		}
		ls := &latestSummary{Total: int(slims[i].total), Framing: int(slims[i].overhead), Tools: slims[i].tools}
		if covered, ok := g.Covered(i); ok {
			if at, ok := g.SegmentOnSpine(spine, covered, g.Pred(i)); ok {
				end := at + len(covered)
				ls.Substitutes, ls.SegEnd, ls.SegTokens, ls.SegFraming = true, end, pre[end]-pre[at], preFraming[end]-preFraming[at]
			}
		}
		c.Latest = ls
		break
	}
	return c
}

// incrBasis is stored beside the Result in ViewCacheFile.
type incrBasis struct {
	// Base fingerprints everything but the committed length and HEAD:
	// the inputs, session.json's other fields, nodes.jsonl's identity.
	Base string `json:"base"`
	// Committed is the committed length measured, Nodes the node count,
	// Head HEAD's id; Seam a hash of the last committed bytes (up to
	// seamBytes), so a rewritten file is not taken for a grown one.
	Committed int64  `json:"committed"`
	Nodes     int    `json:"nodes"`
	Head      string `json:"head"`
	Seam      string `json:"seam"`
	// HashState is session.json's nodes_hash_state at Committed, when it
	// records the hash chain (checkChain).
	HashState string `json:"hash_state,omitempty"`
	Summaries int    `json:"summaries"`
	// The view's tally (tally's fields).
	Cats      [numCategories]int `json:"cats"`
	ViewNodes int                `json:"view_nodes"`
	ViewTotal int                `json:"view_total"`
	AnyTools  bool               `json:"any_tools"`
	// Calib is the calibration's state; nil with NoCalibrate, or when the
	// session has summaries and no usage on HEAD's spine (then a new node
	// with usage would make View count the spine: not incremental).
	Calib *calibBasis `json:"calib,omitempty"`
	// Unresolved are covers_ids of the active or latest summary that name
	// no node: a new node with one of them could change a substitution.
	Unresolved []string `json:"unresolved,omitempty"`
}

const seamBytes = 4096

// nodeRec is one node in the sidecar.
type nodeRec struct {
	hash   uint64
	offset int64
	length uint32
}

const nodeRecSize = 8 + 8 + 4

// nodeRecs are records packed as the sidecar stores them, so that an
// incremental run scans and rewrites them without decoding each.
type nodeRecs []byte

func (rs nodeRecs) len() int { return len(rs) / nodeRecSize }

func (rs nodeRecs) at(i int) nodeRec {
	e := rs[i*nodeRecSize:]
	return nodeRec{hash: binary.LittleEndian.Uint64(e), offset: int64(binary.LittleEndian.Uint64(e[8:])), length: binary.LittleEndian.Uint32(e[16:])}
}

func (rs nodeRecs) add(r nodeRec) nodeRecs {
	rs = binary.LittleEndian.AppendUint64(rs, r.hash)
	rs = binary.LittleEndian.AppendUint64(rs, uint64(r.offset))
	return binary.LittleEndian.AppendUint32(rs, r.length)
}

// idHash is FNV-1a: stable across runs, no allocation. A match is only a
// candidate, checked against the stored line.
func idHash(id string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= 1099511628211
	}
	return h
}

// fileIdentity names the file behind st (device and inode): a file
// replaced by a rename is another file.
func fileIdentity(st os.FileInfo) []byte {
	var b [16]byte
	if id, ok := osfile.IdentityOf(st); ok {
		putInt64(b[:8], int64(id.Dev))
		putInt64(b[8:], int64(id.Ino))
	}
	return b[:]
}

// baseOf is incrBasis.Base: meta without head and nodes_bytes, the inputs
// (the view cache key's) and the file identity.
func baseOf(meta []byte, inputs []byte, ident []byte, maxLine int) (string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(meta, &m); err != nil {
		return "", err
	}
	delete(m, "head")
	delete(m, "nodes_bytes")
	for _, k := range chainFields {
		delete(m, k)
	}
	canon, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write([]byte(RulesVersion + "/" + resultVersion + "/incr-3"))
	for _, part := range [][]byte{canon, inputs, ident, {byte(maxLine), byte(maxLine >> 8), byte(maxLine >> 16), byte(maxLine >> 24)}} {
		h.Write([]byte{0})
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func seamHash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:16])
}

func effectiveMaxLine(o store.OpenOptions) int {
	if o.MaxLineBytes <= 0 {
		return transcript.DefaultMaxLineBytes
	}
	return o.MaxLineBytes
}

// newBasis describes a full measurement for the next incremental run, or
// returns nil when the session is not in a state one can start from (no
// HEAD, an uncommitted tail, a last line without its newline).
func newBasis(v *render.View, st *viewState, base, hashState string) (*incrBasis, nodeRecs, error) {
	s := v.Graph.S
	if v.Head < 0 || s.Meta.NodesBytes == nil || s.TailBytes != 0 || s.CommittedBytes != *s.Meta.NodesBytes || s.CommittedBytes == 0 {
		return nil, nil, nil
	}
	f, err := store.OpenNodes(s.Dir)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	seam := make([]byte, min(seamBytes, s.CommittedBytes))
	if _, err := f.ReadAt(seam, s.CommittedBytes-int64(len(seam))); err != nil {
		return nil, nil, err
	}
	if seam[len(seam)-1] != '\n' {
		return nil, nil, nil
	}
	b := &incrBasis{Base: base, Committed: s.CommittedBytes, Nodes: s.Len(), Head: s.ID(v.Head), Seam: seamHash(seam), HashState: hashState,
		Cats: st.tally.cats, ViewNodes: st.tally.nodes, ViewTotal: st.tally.total, AnyTools: st.tally.anyTools, Calib: st.calib}
	recs := make(nodeRecs, 0, s.Len()*nodeRecSize)
	for i := range s.Len() {
		off, l := s.LineSpan(i)
		recs = recs.add(nodeRec{hash: idHash(s.ID(i)), offset: off, length: uint32(l)})
		if s.IsSummary(i) {
			b.Summaries++
		}
	}
	g := v.Graph
	sums := []int{g.ActiveSummary()}
	for i := s.Len() - 1; i >= 0; i-- {
		if s.IsSummary(i) {
			sums = append(sums, i)
			break
		}
	}
	for _, i := range sums {
		if i < 0 {
			continue
		}
		ref := s.Ref(i)
		ids := ref.CoversIDs
		if sp := ref.CoversSpan; sp.Valid() {
			// A span resolves through its two ends (dag.Graph.Covered walks
			// the chain between them).
			ids = []string{sp.First, sp.Last}
		}
		for _, id := range ids {
			if _, ok := s.Lookup(id); !ok {
				b.Unresolved = append(b.Unresolved, id)
			}
		}
	}
	return b, recs, nil
}

var incrMagic = []byte("CTXFINC5")

// encodeSidecar lays out the sidecar (little endian): magic, the view
// cache key it belongs to, the node records, the matched requests, and a
// CRC-32 of all before it.
func encodeSidecar(key string, recs nodeRecs, reqs []MatchedRequest) []byte {
	size := len(incrMagic) + 4 + len(key) + 8 + len(recs) + 4
	for _, r := range reqs {
		size += reqHeader + len(r.Node)
	}
	out := make([]byte, 0, size+4)
	out = append(out, incrMagic...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(key)))
	out = append(out, key...)
	out = binary.LittleEndian.AppendUint64(out, uint64(recs.len()))
	out = append(out, recs...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(reqs)))
	for _, r := range reqs {
		out = binary.LittleEndian.AppendUint64(out, uint64(int64(r.Estimated)))
		out = binary.LittleEndian.AppendUint64(out, uint64(r.Measured))
		out = binary.LittleEndian.AppendUint64(out, uint64(int64(r.Framing)))
		out = binary.LittleEndian.AppendUint64(out, uint64(r.Hidden))
		out = append(out, b2u8(r.NewTurn))
		out = binary.LittleEndian.AppendUint32(out, uint32(int32(r.Segment)))
		out = append(out, r.Tokenizer)
		out = binary.LittleEndian.AppendUint16(out, uint16(len(r.Node)))
		out = append(out, r.Node...)
	}
	return binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(out))
}

var errSidecar = errors.New("sidecar does not match")

// reqHeader is a matched request's fixed part in the sidecar: estimated,
// measured, framing, hidden (8 bytes each), new turn (1), segment (4), the
// answering model's tokenizer (1), the id's length (2).
const reqHeader = 40

func b2u8(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// decodeSidecar reads what encodeSidecar wrote for key.
func decodeSidecar(data []byte, key string) (nodeRecs, []MatchedRequest, error) {
	if len(data) < len(incrMagic)+4 || !bytes.HasPrefix(data, incrMagic) {
		return nil, nil, errSidecar
	}
	body := data[:len(data)-4]
	if binary.LittleEndian.Uint32(data[len(data)-4:]) != crc32.ChecksumIEEE(body) {
		return nil, nil, errSidecar
	}
	r := body[len(incrMagic):]
	take := func(n int) []byte {
		if n < 0 || len(r) < n {
			r = nil
			return nil
		}
		out := r[:n]
		r = r[n:]
		return out
	}
	kl := take(4)
	if kl == nil || string(take(int(binary.LittleEndian.Uint32(kl)))) != key {
		return nil, nil, errSidecar
	}
	nb := take(8)
	if nb == nil {
		return nil, nil, errSidecar
	}
	n := int(binary.LittleEndian.Uint64(nb))
	raw := take(n * nodeRecSize)
	if raw == nil && n > 0 {
		return nil, nil, errSidecar
	}
	recs := nodeRecs(raw)
	qb := take(4)
	if qb == nil {
		return nil, nil, errSidecar
	}
	reqs := make([]MatchedRequest, binary.LittleEndian.Uint32(qb))
	for k := range reqs {
		h := take(reqHeader)
		if h == nil || h[32] > 1 {
			return nil, nil, errSidecar
		}
		id := take(int(binary.LittleEndian.Uint16(h[38:])))
		if id == nil && binary.LittleEndian.Uint16(h[38:]) > 0 {
			return nil, nil, errSidecar
		}
		reqs[k] = MatchedRequest{Node: string(id), Estimated: int(int64(binary.LittleEndian.Uint64(h))), Measured: int64(binary.LittleEndian.Uint64(h[8:])),
			Framing: int(int64(binary.LittleEndian.Uint64(h[16:]))), Hidden: int64(binary.LittleEndian.Uint64(h[24:])), NewTurn: h[32] == 1,
			Segment: int(int32(binary.LittleEndian.Uint32(h[33:]))), Tokenizer: h[37]}
	}
	if len(r) != 0 {
		return nil, nil, errSidecar
	}
	return recs, reqs, nil
}

func readSidecar(dir, key string) (nodeRecs, []MatchedRequest, error) {
	data, err := store.ReadCacheFile(filepath.Join(dir, CacheDir, IncrementalFile), maxCacheRead)
	if err != nil {
		return nil, nil, err
	}
	return decodeSidecar(data, key)
}
