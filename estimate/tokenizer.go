package estimate

import (
	"container/heap"
	_ "embed"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Encodings this build counts exactly, offline.
const (
	O200kBase  = "o200k_base"
	Cl100kBase = "cl100k_base"
)

// Encodings lists the encodings this build counts, for flag validation.
var Encodings = []string{O200kBase, Cl100kBase}

// Pre-split patterns of the two encodings, exactly as pkoukk/tiktoken-go
// v0.1.8 (encoding.go) and OpenAI's tiktoken define them. splitter.go
// implements them by hand; tests check it against these patterns run by
// regexp2 (the library's engine). The merge ranks are
// tiktoken-go-loader's, decoded into ranks/*.bin and embedded in the
// binary: nothing is ever downloaded at run time.
var patterns = map[string]string{
	O200kBase: `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	Cl100kBase: `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
}

// UnknownEncodingError names an encoding this build does not have.
type UnknownEncodingError struct{ Name string }

func (e *UnknownEncodingError) Error() string {
	return fmt.Sprintf("unknown encoding %q (want %s or %s)", e.Name, O200kBase, Cl100kBase)
}

type rankTable struct {
	once  sync.Once
	ranks *rankMap
	err   error
}

var tables = map[string]*rankTable{O200kBase: {}, Cl100kBase: {}}

// ranksOf loads an encoding's merge ranks once per process.
func ranksOf(enc string) (*rankMap, error) {
	t, ok := tables[enc]
	if !ok {
		return nil, &UnknownEncodingError{Name: enc}
	}
	t.once.Do(func() {
		t.ranks, t.err = loadRanks(enc)
		if t.err != nil {
			t.err = fmt.Errorf("loading %s: %w", enc, t.err)
		}
	})
	return t.ranks, t.err
}

// Rank tables are embedded pre-decoded (ranks/*.bin, written by
// TestRankTables from tiktoken-go-loader's files, which it checks them
// against): every process that counts a node loads one, and decoding the
// loader's base64 text took 25–50 ms of an incremental estimate's 60–90.
//
// Layout: magic "CTXFRNK1", u32 token count n (little endian), n bytes of
// token lengths, then the tokens back to back. Token k has rank k (the
// loader's files are in rank order, without gaps; the test checks it).
var (
	//go:embed ranks/o200k_base.bin
	o200kTable string
	//go:embed ranks/cl100k_base.bin
	cl100kTable string
)

var rankBlobs = map[string]*string{O200kBase: &o200kTable, Cl100kBase: &cl100kTable}

const rankMagic = "CTXFRNK1"

// loadRanks builds the rank table of enc from its embedded blob.
func loadRanks(enc string) (*rankMap, error) {
	blob := *rankBlobs[enc]
	if len(blob) < len(rankMagic)+4 || blob[:len(rankMagic)] != rankMagic {
		return nil, fmt.Errorf("%s: bad embedded rank table", enc)
	}
	n := int(binary.LittleEndian.Uint32([]byte(blob[len(rankMagic) : len(rankMagic)+4])))
	lens := blob[len(rankMagic)+4:]
	if len(lens) < n {
		return nil, fmt.Errorf("%s: truncated embedded rank table", enc)
	}
	arena := lens[n:]
	lens = lens[:n]
	starts := make([]uint32, n+1)
	ranks := make([]int32, n)
	at := uint32(0)
	for k := range n {
		starts[k], ranks[k] = at, int32(k)
		at += uint32(lens[k])
	}
	if int(at) != len(arena) {
		return nil, fmt.Errorf("%s: embedded rank table: tokens take %d bytes, %d stored", enc, at, len(arena))
	}
	starts[n] = at
	return newRankMap(arena, starts, ranks), nil
}

// rankMap maps token bytes to merge rank. It is an open-addressing table
// of token numbers over one arena of token bytes: about 4 MB for o200k's
// 200k tokens where a Go map of strings took 17 MB, loaded by every
// process that counts anything.
type rankMap struct {
	seed   maphash.Seed
	arena  string
	starts []uint32 // token k is arena[starts[k]:starts[k+1]]
	ranks  []int32  // rank of token k
	slots  []uint32 // token number + 1; 0 is empty
	mask   uint64
}

func newRankMap(arena string, starts []uint32, ranks []int32) *rankMap {
	n := len(ranks)
	size := 1
	for size < 2*n { // load ≤ 1/2: short probes
		size *= 2
	}
	m := &rankMap{seed: maphash.MakeSeed(), arena: arena, starts: starts, ranks: ranks, slots: make([]uint32, size), mask: uint64(size - 1)}
	// Written before it is probed: a fresh page read first is the
	// kernel's zero page, and the write after it a copy-on-write fault
	// that flushes the TLB of every core the process runs on — 15% of an
	// incremental estimate FILE's CPU (docs/BENCHMARKS.md, "step 4").
	clear(m.slots)
	for k := range n {
		p := maphash.String(m.seed, m.token(k)) & m.mask
		for m.slots[p] != 0 {
			p = (p + 1) & m.mask
		}
		m.slots[p] = uint32(k + 1)
	}
	return m
}

func (m *rankMap) token(k int) string { return m.arena[m.starts[k]:m.starts[k+1]] }

// Len is the number of tokens.
func (m *rankMap) Len() int { return len(m.ranks) }

// get returns the rank of token s.
func (m *rankMap) get(s string) (int, bool) {
	for p := maphash.String(m.seed, s) & m.mask; ; p = (p + 1) & m.mask {
		v := m.slots[p]
		if v == 0 {
			return 0, false
		}
		k := v - 1
		if from, to := m.starts[k], m.starts[k+1]; int(to-from) == len(s) && m.arena[from:to] == s {
			return int(m.ranks[k]), true
		}
	}
}

// counter counts tokens of one encoding. It is NOT safe for concurrent use
// (its merge buffers): each goroutine takes its own from a pool. The rank
// table is shared read-only. (A shared regexp2 matcher, which the library
// uses, serialised goroutines on its runner cache: two gave only 1.34×.)
type counter struct {
	enc   string
	ranks *rankMap
	next  func(s string, i int) int
	merge merger
	memo  map[string]int32
}

var (
	poolMu sync.Mutex
	pools  = map[string]*sync.Pool{}
)

func getCounter(enc string) (*counter, error) {
	ranks, err := ranksOf(enc)
	if err != nil {
		return nil, err
	}
	if c, ok := poolOf(enc).Get().(*counter); ok {
		return c, nil
	}
	return newCounter(enc, ranks), nil
}

func newCounter(enc string, ranks *rankMap) *counter {
	return &counter{enc: enc, ranks: ranks, next: splitFunc(enc)}
}

func putCounter(c *counter) { poolOf(c.enc).Put(c) }

func poolOf(enc string) *sync.Pool {
	poolMu.Lock()
	defer poolMu.Unlock()
	p, ok := pools[enc]
	if !ok {
		p = &sync.Pool{}
		pools[enc] = p
	}
	return p
}

// chunkBytes bounds the text handed to the pre-splitter in one call: the
// matcher holds the whole input as runes, and pkoukk given one 33 MB string
// peaks at 1.8 GB RSS. Splitting happens only at boundaries where no piece
// of either pattern can span (see safeSplit), so counts stay exact.
var chunkBytes = 64 << 10

// Text counts s as ordinary text (a literal "<|endoftext|>" is not a
// special token) in the given encoding. It is the one way any package
// sizes a string.
func Text(encoding, s string) (int, error) {
	if s == "" {
		if _, ok := tables[encoding]; !ok {
			return 0, &UnknownEncodingError{Name: encoding}
		}
		return 0, nil
	}
	c, err := getCounter(encoding)
	if err != nil {
		return 0, err
	}
	defer putCounter(c)
	return c.count(s), nil
}

// count tokenizes s chunk by chunk.
func (c *counter) count(s string) int {
	n := 0
	for len(s) > 0 {
		cut := len(s)
		if cut > chunkBytes {
			cut = safeSplit(s, chunkBytes)
		}
		n += c.countChunk(s[:cut])
		s = s[cut:]
	}
	return n
}

// safeSplit returns a cut point ≥ min: right after a newline that is
// followed by a letter, or len(s) when there is none. No piece of the
// o200k or cl100k pattern contains a newline followed by a letter (the
// optional prefix of a letter run excludes \r and \n, and the newline
// runs end at the first non-space), every piece that ends at the cut ends
// there without looking past it, and no pattern looks behind, so counting
// s[:cut] and s[cut:] apart gives exactly the count of s (tested on the
// reference vectors with a small chunk size).
func safeSplit(s string, min int) int {
	for i := min; i < len(s); i++ {
		if s[i-1] != '\n' {
			continue
		}
		r, _ := utf8.DecodeRuneInString(s[i:])
		if unicode.IsLetter(r) {
			return i
		}
	}
	return len(s)
}

// countChunk pre-splits with the encoding's splitter and merges each
// piece.
func (c *counter) countChunk(s string) int {
	n := 0
	for i := 0; i < len(s); {
		e := c.next(s, i)
		n += c.pieceCount(s[i:e])
		i = e
	}
	return n
}

// pieceCount is the number of BPE tokens of one pre-split piece.
func (c *counter) pieceCount(piece string) int {
	if len(piece) == 0 {
		return 0
	}
	if _, ok := c.ranks.get(piece); ok {
		return 1
	}
	// Pieces that are not one token repeat too (identifiers, numbers,
	// words in other scripts); remember their merge results.
	if n, ok := c.memo[piece]; ok {
		return int(n)
	}
	var n int
	if len(piece) < 64 {
		n = mergeSmall(piece, c.ranks)
	} else {
		n = c.merge.count(piece, c.ranks)
	}
	if len(piece) <= memoMaxPiece {
		if c.memo == nil || len(c.memo) >= memoEntries {
			c.memo = make(map[string]int32, 1024)
		}
		c.memo[strings.Clone(piece)] = int32(n)
	}
	return n
}

// The merge memo is per counter (per goroutine), bounded, and dropped
// whole when full.
const (
	memoEntries  = 1 << 16
	memoMaxPiece = 256
)

const noRank = int(^uint(0) >> 1)

// mergeSmall is tiktoken's byte-pair merge: repeatedly join the adjacent
// pair whose joined bytes have the lowest rank (leftmost on a tie), until
// no joined pair is in the table. Quadratic, which is fastest for the short
// pieces that are almost all of real text.
func mergeSmall(piece string, ranks *rankMap) int {
	var startsBuf [64 + 1]int
	var rankBuf [64 + 1]int
	starts := startsBuf[:len(piece)+1]
	rk := rankBuf[:len(piece)+1]
	for i := range starts {
		starts[i] = i
	}
	n := len(starts)
	get := func(i int) int {
		// Rank of parts i and i+1 joined.
		if i+2 < n {
			if r, ok := ranks.get(piece[starts[i]:starts[i+2]]); ok {
				return r
			}
		}
		return noRank
	}
	for i := 0; i < n-1; i++ {
		rk[i] = get(i)
	}
	rk[n-1] = noRank
	for n > 1 {
		best, at := noRank, -1
		for i := 0; i < n-1; i++ {
			if rk[i] < best {
				best, at = rk[i], i
			}
		}
		if at < 0 {
			break
		}
		copy(starts[at+1:n-1], starts[at+2:n])
		copy(rk[at+1:n-1], rk[at+2:n])
		n--
		rk[at] = get(at)
		if at > 0 {
			rk[at-1] = get(at - 1)
		}
	}
	return n - 1
}

// merger is the same merge in O(n log n) for long pieces (base64, a long
// run of one letter, CJK without spaces): a heap of candidate pairs ordered
// by (rank, position) — the position order gives the leftmost-on-a-tie rule
// — over a linked list of parts, with stale entries skipped.
type merger struct {
	next, prev []int
	end        []int
	gen        []int
	h          pairHeap
}

type pair struct{ rank, pos, gen int }

type pairHeap []pair

func (h pairHeap) Len() int { return len(h) }
func (h pairHeap) Less(i, j int) bool {
	if h[i].rank != h[j].rank {
		return h[i].rank < h[j].rank
	}
	return h[i].pos < h[j].pos
}
func (h pairHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pairHeap) Push(x any)   { *h = append(*h, x.(pair)) }
func (h *pairHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (m *merger) count(piece string, ranks *rankMap) int {
	n := len(piece)
	m.next = resize(m.next, n)
	m.prev = resize(m.prev, n)
	m.end = resize(m.end, n)
	m.gen = resize(m.gen, n)
	m.h = m.h[:0]
	for i := 0; i < n; i++ {
		m.next[i], m.prev[i], m.end[i], m.gen[i] = i+1, i-1, i+1, 0
	}
	m.next[n-1] = -1
	initial := true
	push := func(i int) {
		j := m.next[i]
		if j < 0 {
			return
		}
		if r, ok := ranks.get(piece[i:m.end[j]]); ok {
			if initial {
				m.h = append(m.h, pair{rank: r, pos: i, gen: m.gen[i]})
			} else {
				heap.Push(&m.h, pair{rank: r, pos: i, gen: m.gen[i]})
			}
		}
	}
	for i := 0; i < n-1; i++ {
		push(i)
	}
	heap.Init(&m.h)
	initial = false
	parts := n
	for m.h.Len() > 0 {
		p := heap.Pop(&m.h).(pair)
		i := p.pos
		// A part's generation changes whenever it or its right neighbour
		// changes, which makes every older entry for it stale.
		if m.end[i] < 0 || p.gen != m.gen[i] || m.next[i] < 0 {
			continue
		}
		j := m.next[i]
		m.end[i] = m.end[j]
		m.next[i] = m.next[j]
		if k := m.next[j]; k >= 0 {
			m.prev[k] = i
		}
		m.end[j] = -1
		parts--
		m.gen[i]++
		push(i)
		if pi := m.prev[i]; pi >= 0 {
			m.gen[pi]++
			push(pi)
		}
	}
	return parts
}

func resize(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n)
	}
	return s[:n]
}

// Warm loads the rank table the last measurement of the session in dir
// used (its view cache), so a command that first refreshes the session —
// a transcript file's cache, live.Options.Prepare — finds the table built
// when it counts: building o200k's takes milliseconds of every such
// command. It reads only the view cache; anything missing is no error.
func Warm(dir string) {
	if vc, ok := readViewCache(dir); ok {
		if _, known := tables[vc.Result.Encoding]; known {
			_, _ = ranksOf(vc.Result.Encoding)
		}
	}
}
