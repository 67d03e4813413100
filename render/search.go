package render

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// Where a search hit stands relative to the view rendered from the head.
const (
	// HitVisible: the model reads this node next turn.
	HitVisible = "visible"
	// HitCovered: on the head's branch but folded into the active summary;
	// the model reads the summary instead (a cold layer: still on
	// disk, found only by search).
	HitCovered = "covered"
	// HitOffBranch: not on the head's branch (another retry or fork).
	HitOffBranch = "off-branch"
	// HitRelic: a superseded summary, never consulted again (docs/FORMAT.md §4).
	HitRelic = "relic"
)

// SearchOptions say what to look for.
type SearchOptions struct {
	// Query is a case-insensitive substring, or a regular expression
	// (RE2 syntax, case-sensitive unless it starts with (?i)) with Regexp.
	Query  string
	Regexp bool
	// SnippetRunes is the context kept on each side of the match in the
	// snippet (default 40).
	SnippetRunes int
	// Progress, when set, is told how many more nodes were scanned, after
	// every batch of a few thousand (a progress bar; it must be cheap).
	Progress func(scanned int)
}

// Hit is one matching node.
type Hit struct {
	Index int
	ID    string
	Role  transcript.Role
	// Line is the node's line in nodes.jsonl.
	Line int
	// Summary is true when the hit is itself a summary node.
	Summary bool
	// Status is HitVisible, HitCovered, HitOffBranch or HitRelic.
	Status string
	// CoveredBy is the active summary standing in for a covered hit.
	CoveredBy string
	// Summaries lists every summary whose covers_ids include the node, the
	// relics included, in file order.
	Summaries []string
	// Tips are the branch tips whose spine holds the node; OnHead is true
	// when the head's spine does.
	Tips   []string
	OnHead bool
	// Field says where the match is: content, thinking, tool_call or
	// tool_result; Snippet is the matched text with some context, on one line.
	Field   string
	Snippet string
}

// QueryError is a search pattern that does not compile.
type QueryError struct {
	Query string
	Err   error
}

func (e *QueryError) Error() string { return fmt.Sprintf("query %q: %v", e.Query, e.Err) }
func (e *QueryError) Unwrap() error { return e.Err }

// Search streams every node of the graph, covered and off-branch ones
// included, and calls fn for each that matches, in file order. Recall is
// over the whole session, not the view: a turn folded into a summary is
// still on disk and still found (a cold layer); each hit
// says whether the view from v.Head shows it. Nodes are read one at a
// time in one sequential pass; memory is O(nodes) for the index only.
func Search(ctx context.Context, v *View, opts SearchOptions, fn func(Hit) error) error {
	m, err := newMatcher(opts)
	if err != nil {
		return err
	}
	g := v.Graph
	st := newSearchState(v)
	lines, err := newLineReader(g.S)
	if err != nil {
		return err
	}
	defer lines.close()
	// Decoding a node is most of the cost: batches of lines are matched on
	// all cores, then reported in file order.
	workers := runtime.GOMAXPROCS(0)
	lowers := make([][]byte, workers)
	var (
		arena   []byte
		bounds  []int
		results []lineMatch
	)
	for start := 0; start < g.Len(); {
		if err := ctx.Err(); err != nil {
			return err
		}
		arena, bounds = arena[:0], bounds[:0]
		end := start
		for end < g.Len() && end-start < searchBatchLines && len(arena) < searchBatchBytes {
			raw, err := lines.line(end)
			if err != nil {
				return err
			}
			arena = append(arena, raw...)
			bounds = append(bounds, len(arena))
			end++
		}
		n := end - start
		results = append(results[:0], make([]lineMatch, n)...)
		var wg sync.WaitGroup
		for w := range min(workers, n) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := w; k < n; k += workers {
					if ctx.Err() != nil {
						return // cancelled: checked per line, a batch may hold 8 MB
					}
					lo := 0
					if k > 0 {
						lo = bounds[k-1]
					}
					results[k] = m.matchLine(arena[lo:bounds[k]], &lowers[w], opts.SnippetRunes)
				}
			}()
		}
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return err
		}
		for k, r := range results {
			if r.err != nil {
				ref := g.Ref(start + k)
				return &transcript.ParseError{File: g.S.NodesPath(), Line: ref.Line, NodeID: ref.ID, Msg: "changed since it was indexed: " + r.err.Error()}
			}
			if r.ok {
				if err := fn(st.hit(start+k, r.field, r.snippet)); err != nil {
					return err
				}
			}
		}
		if opts.Progress != nil {
			opts.Progress(n)
		}
		start = end
	}
	return nil
}

// A batch is at most this many lines or (past the first line) bytes, so
// memory stays bounded whatever the line sizes.
const (
	searchBatchLines = 4096
	searchBatchBytes = 8 << 20
)

// lineMatch is the outcome of matching one raw line.
type lineMatch struct {
	ok             bool
	field, snippet string
	err            error
}

// matchLine pre-filters, decodes and matches one line; lower is the
// caller's reusable buffer. Safe for concurrent use with distinct buffers.
func (m *matcher) matchLine(raw []byte, lower *[]byte, context int) lineMatch {
	if m.pieces != nil {
		var skip bool
		*lower, skip = m.cannotMatch(raw, *lower)
		if skip {
			return lineMatch{}
		}
	}
	var n transcript.Node
	if err := n.UnmarshalJSON(raw); err != nil {
		return lineMatch{err: err}
	}
	field, snippet, ok := m.match(&n, context)
	return lineMatch{ok: ok, field: field, snippet: snippet}
}

// lineReader reads the indexed lines of nodes.jsonl in one sequential,
// buffered pass: index order is file order, and one read per node
// (Session.RawLine) costs a system call each, which dominates a scan.
type lineReader struct {
	s   *store.Session
	f   *store.NodesReader
	r   *bufio.Reader
	pos int64
	buf []byte
}

func newLineReader(s *store.Session) (*lineReader, error) {
	f, err := store.OpenNodes(s.Dir)
	if errors.Is(err, os.ErrNotExist) && s.Len() == 0 {
		return &lineReader{s: s}, nil
	}
	if err != nil {
		return nil, &transcript.ParseError{File: s.NodesPath(), Msg: err.Error()}
	}
	return &lineReader{s: s, f: f, r: bufio.NewReaderSize(f, 1<<20)}, nil
}

func (lr *lineReader) line(i int) ([]byte, error) {
	ref := lr.s.Ref(i)
	if ref.Offset < lr.pos {
		// Not in file order (never expected): read it directly.
		return lr.s.RawLine(i)
	}
	if _, err := lr.r.Discard(int(ref.Offset - lr.pos)); err != nil {
		return nil, &transcript.ParseError{File: lr.s.NodesPath(), Line: ref.Line, NodeID: ref.ID, Msg: "read: " + err.Error()}
	}
	if cap(lr.buf) < ref.Length {
		lr.buf = make([]byte, ref.Length)
	}
	lr.buf = lr.buf[:ref.Length]
	if _, err := io.ReadFull(lr.r, lr.buf); err != nil {
		return nil, &transcript.ParseError{File: lr.s.NodesPath(), Line: ref.Line, NodeID: ref.ID, Msg: "read: " + err.Error()}
	}
	lr.pos = ref.Offset + int64(ref.Length)
	return lr.buf, nil
}

func (lr *lineReader) close() {
	if lr.f != nil {
		lr.f.Close()
	}
}

type matcher struct {
	re *regexp.Regexp
	// pieces are the lower-cased, space-separated words of a substring
	// query whose bytes JSON never escapes. A match lies inside one text
	// field (a tool call's "name arguments" text is built by joining two
	// fields with a space, which is why the words are checked one by one),
	// so a line whose lower-cased raw bytes lack any word cannot match and
	// is skipped without decoding.
	pieces [][]byte
}

func newMatcher(opts SearchOptions) (*matcher, error) {
	if opts.Query == "" {
		return nil, &QueryError{Query: opts.Query, Err: fmt.Errorf("empty query")}
	}
	if opts.Regexp {
		re, err := regexp.Compile(opts.Query)
		if err != nil {
			return nil, &QueryError{Query: opts.Query, Err: err}
		}
		return &matcher{re: re}, nil
	}
	m := &matcher{re: regexp.MustCompile("(?i)" + regexp.QuoteMeta(opts.Query))}
	for i := 0; i < len(opts.Query); i++ {
		c := opts.Query[i]
		// Non-ASCII letters fold in ways an ASCII lower-casing cannot
		// follow; JSON escapes quotes, backslashes, controls and (some
		// encoders) <, > and &.
		if c >= utf8.RuneSelf || c < 0x20 || strings.IndexByte("\"\\<>&", c) >= 0 {
			return m, nil
		}
	}
	for _, w := range strings.Fields(strings.ToLower(opts.Query)) {
		m.pieces = append(m.pieces, []byte(w))
	}
	return m, nil
}

// cannotMatch is the raw-line pre-filter: it lower-cases the ASCII
// letters of raw into buf (reused) and looks for every word of the query
// there. A line holding an escape that may stand for a query character
// (\u…, or \/ for a slash) and a line holding one of the only non-ASCII
// runes that case-fold to ASCII letters (the Kelvin sign for k, the long
// s for s) are always decoded.
func (m *matcher) cannotMatch(raw, buf []byte) ([]byte, bool) {
	buf = append(buf[:0], raw...)
	for k, c := range buf {
		if 'A' <= c && c <= 'Z' {
			buf[k] = c + ('a' - 'A')
		}
	}
	missing := false
	for _, p := range m.pieces {
		if !bytes.Contains(buf, p) {
			missing = true
			break
		}
	}
	if !missing {
		return buf, false
	}
	if bytes.Contains(raw, []byte(`\u`)) || bytes.Contains(raw, []byte(`\/`)) ||
		bytes.Contains(raw, []byte("\u212a")) || bytes.Contains(raw, []byte("\u017f")) {
		return buf, false
	}
	return buf, true
}

// match looks through the text a reader of the node would see: its
// content (text, thinking, tool results) and its tool calls (name and
// arguments). Ids, timestamps and metadata are not searched.
func (m *matcher) match(n *transcript.Node, context int) (field, snippet string, ok bool) {
	try := func(f, text string) bool {
		loc := m.re.FindStringIndex(text)
		if loc == nil {
			return false
		}
		field, snippet, ok = f, makeSnippet(text, loc, context), true
		return true
	}
	if !n.Content.IsBlocks {
		if try("content", n.Content.Text) {
			return
		}
	}
	for _, b := range n.Content.Blocks {
		switch b.Type {
		case transcript.BlockText:
			if try("content", b.Text) {
				return
			}
		case transcript.BlockThinking:
			if try("thinking", b.Text) {
				return
			}
		case transcript.BlockToolResult:
			if try("tool_result", b.Text) {
				return
			}
		case transcript.BlockToolCall:
			if try("tool_call", b.Name+" "+transcript.ArgumentsText(b.Arguments)) {
				return
			}
		}
	}
	for _, c := range n.ToolCalls {
		if try("tool_call", c.Name+" "+c.ArgumentsText()) {
			return
		}
	}
	return "", "", false
}

// makeSnippet cuts the match with up to context runes on each side, on one
// line, marking cut ends with "…". Control characters are escaped
// (TextSafe): a snippet is printed for people, often to a terminal.
func makeSnippet(text string, loc []int, context int) string {
	if context <= 0 {
		context = 40
	}
	start, end := loc[0], loc[1]
	for k := 0; k < context && start > 0; k++ {
		_, size := utf8.DecodeLastRuneInString(text[:start])
		start -= size
	}
	for k := 0; k < context && end < len(text); k++ {
		_, size := utf8.DecodeRuneInString(text[end:])
		end += size
	}
	s := TextSafe(strings.Join(strings.Fields(text[start:end]), " "))
	if start > 0 {
		s = "…" + s
	}
	if end < len(text) {
		s += "…"
	}
	return s
}

// searchState classifies hits. It is built once per search; the parts
// that cost O(nodes) (tip ancestry, summary coverage) are built on the
// first hit, so a search with no hits pays only for the scan.
type searchState struct {
	v       *View
	inView  map[int]bool
	onSpine map[int]bool
	// covered marks the head-spine nodes the active summary replaces.
	covered map[int]bool

	built     bool
	tips      []int
	pre, post []int32
	// segs are the summaries' covered segments, in node order: a hit asks
	// each whether it holds the node, so memory is one entry per summary,
	// not one per covered node and summary (docs/FORMAT.md §4).
	segs []coverSeg
}

// coverSeg is one summary's coverage: the chain from first to last, or,
// for a version 1 list that is no chain (a broken session), its nodes.
type coverSeg struct {
	summary     string
	first, last int
	nodes       map[int]bool
}

func newSearchState(v *View) *searchState {
	st := &searchState{v: v, inView: map[int]bool{}, onSpine: map[int]bool{}, covered: map[int]bool{}}
	for _, i := range v.Indexes {
		st.inView[i] = true
	}
	if v.Head >= 0 {
		spine := v.Graph.Spine(v.Head)
		for _, i := range spine {
			st.onSpine[i] = true
		}
		if sub := v.Substitution; sub.Summary >= 0 {
			for _, i := range spine[sub.At : sub.At+sub.Len] {
				st.covered[i] = true
			}
		}
	}
	return st
}

// build numbers the predecessor forest in DFS pre- and post-order, so
// "tip t lies below node i" is two comparisons; and lists the summaries'
// covered segments.
func (st *searchState) build() {
	st.built = true
	g := st.v.Graph
	n := g.Len()
	st.pre, st.post = make([]int32, n), make([]int32, n)
	var clock int32
	type frame struct{ node, next int }
	var stack []frame
	for root := 0; root < n; root++ {
		if g.Pred(root) >= 0 {
			continue
		}
		stack = append(stack[:0], frame{node: root})
		st.pre[root] = clock
		clock++
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			kids := g.Children(top.node)
			if top.next < len(kids) {
				c := int(kids[top.next])
				top.next++
				st.pre[c] = clock
				clock++
				stack = append(stack, frame{node: c})
				continue
			}
			st.post[top.node] = clock
			clock++
			stack = stack[:len(stack)-1]
		}
	}
	st.tips = g.Tips()
	for s := 0; s < n; s++ {
		if !g.S.IsSummary(s) {
			continue
		}
		covered, ok := g.Covered(s)
		if !ok || len(covered) == 0 {
			continue
		}
		seg := coverSeg{summary: g.ID(s), first: covered[0], last: covered[len(covered)-1]}
		for k := 1; k < len(covered); k++ {
			if g.Pred(covered[k]) != covered[k-1] {
				seg.nodes = make(map[int]bool, len(covered))
				for _, c := range covered {
					seg.nodes[c] = true
				}
				break
			}
		}
		st.segs = append(st.segs, seg)
	}
}

// summariesOf lists, in node order, the summaries whose coverage holds i.
func (st *searchState) summariesOf(i int) []string {
	g := st.v.Graph
	var out []string
	for _, seg := range st.segs {
		if seg.nodes != nil && seg.nodes[i] || seg.nodes == nil && g.IsAncestor(seg.first, i) && g.IsAncestor(i, seg.last) {
			out = append(out, seg.summary)
		}
	}
	return out
}

func (st *searchState) hit(i int, field, snippet string) Hit {
	if !st.built {
		st.build()
	}
	g := st.v.Graph
	r := g.Ref(i)
	h := Hit{Index: i, ID: r.ID, Role: r.Role, Line: r.Line, Summary: r.Summary,
		Field: field, Snippet: snippet, OnHead: st.onSpine[i], Summaries: st.summariesOf(i)}
	switch {
	case st.inView[i]:
		h.Status = HitVisible
	case st.covered[i]:
		h.Status = HitCovered
		h.CoveredBy = g.ID(st.v.Substitution.Summary)
	case g.IsRelic(i):
		h.Status = HitRelic
	default:
		h.Status = HitOffBranch
	}
	// A summary node is on no branch: it hangs off its splice point.
	if !r.Summary && g.Depth(i) >= 0 {
		for _, t := range st.tips {
			if st.pre[i] <= st.pre[t] && st.post[t] <= st.post[i] {
				h.Tips = append(h.Tips, g.ID(t))
			}
		}
	}
	return h
}
