// Package estimate owns every token figure ctxfold prints: exact offline
// BPE counts of the rendered view (seed 001 §01: one measurement basis),
// its breakdown by category, the output reserve and input budget of a
// model, and calibration against provider-recorded usage. Nothing outside
// this package counts tokens. It does not decide what the model reads
// (render/ does) and never writes a session; the only files it writes are
// its own caches inside a session directory (CacheFile, ViewCacheFile),
// which are safe to delete.
package estimate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/transcript"
)

// DefaultCompactAt is the budget share at which a session should compact
// (seed 001 §02: compact if ≥ 80%).
const DefaultCompactAt = 0.80

// Options select the model and the budget arithmetic, and tune the work.
type Options struct {
	// Model names the model (resolved through Models, then the built-in
	// table). "" with no Window counts tokens without a budget.
	Model string
	// Encoding overrides the model's encoding ("" means the model's).
	Encoding string
	// Window and MaxOutput override the model's context window and output
	// capability; OutputCap is an explicit output reserve used as given.
	Window    int
	MaxOutput int
	OutputCap int
	// Models extends or overrides the built-in table (the config's models:).
	Models map[string]Model
	// CompactAt is the budget share for should_compact (0: 0.80).
	CompactAt float64
	// NodeDetail fills Result.Nodes.
	NodeDetail bool
	// NoCalibrate turns calibration off (View only).
	NoCalibrate bool
	// NoCache neither reads nor writes the count cache (View, PerNode).
	NoCache bool
	// Workers bounds tokenizing goroutines (0: GOMAXPROCS).
	Workers int
	// Warn receives non-fatal problems (a corrupt cache); nil drops them.
	Warn func(msg string)
}

// NodeCount is one node's share of the view. ContentTokens is the exact
// count of what the node carries (text, thinking, tool calls and results,
// images, tool definitions); Tokens adds its chat-format overhead.
type NodeCount struct {
	ID            string `json:"id"`
	Role          string `json:"role"`
	Category      string `json:"category"`
	ContentTokens int    `json:"content_tokens"`
	Tokens        int    `json:"tokens"`
}

// Result is the occupancy of one rendered view.
type Result struct {
	Session         string  `json:"session"`
	Head            string  `json:"head,omitempty"`
	Model           string  `json:"model"`
	Provider        string  `json:"provider"`
	Encoding        string  `json:"encoding"`
	EncodingIsProxy bool    `json:"encoding_is_proxy"`
	Window          int     `json:"window"`
	OutputReserve   int     `json:"output_reserve"`
	InputBudget     int     `json:"input_budget"`
	Total           int     `json:"total"`
	Ratio           float64 `json:"ratio"`
	// BudgetPct is Total as a percentage of InputBudget.
	BudgetPct     float64        `json:"budget_pct"`
	ShouldCompact bool           `json:"should_compact"`
	Categories    map[string]int `json:"categories"`
	Calibration   *Calibration   `json:"calibration"`
	Nodes         []NodeCount    `json:"nodes,omitempty"`
}

// resolve is Budget, except that no model and no window is allowed: the
// counts are still exact, only the budget fields stay zero.
func resolve(opts Options) (BudgetInfo, error) {
	if opts.Model == "" && opts.Window <= 0 {
		enc := opts.Encoding
		if enc == "" {
			enc = O200kBase
		}
		if _, ok := tables[enc]; !ok {
			return BudgetInfo{}, &UnknownEncodingError{Name: enc}
		}
		return BudgetInfo{Provider: ProviderOpenAI, Encoding: enc}, nil
	}
	return Budget(opts)
}

// profileOf is what a node's count depends on besides its bytes.
func profileOf(b BudgetInfo) string { return rulesVersion + "/" + b.Encoding + "/" + b.Provider }

func workers(opts Options) int {
	if opts.Workers > 0 {
		return opts.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// Nodes measures rendered nodes in reading order: THE entry point every
// token total goes through (estimate, compact's before/after, graph, fit).
// Nodes are tokenized on all cores; nothing is cached.
func Nodes(ctx context.Context, nodes []*transcript.Node, opts Options) (*Result, error) {
	b, err := resolve(opts)
	if err != nil {
		return nil, err
	}
	counts := make([]parts, len(nodes))
	err = parallel(ctx, len(nodes), workers(opts), b.Encoding, func(lc *lazyCounter, k int) error {
		c, err := lc.get()
		if err != nil {
			return err
		}
		counts[k] = countNode(c, b.Provider, nodes[k])
		return nil
	})
	if err != nil {
		return nil, err
	}
	meta := func(k int) nodeMeta {
		n := nodes[k]
		return nodeMeta{id: n.ID, role: string(n.Role), category: categoryOf(n)}
	}
	return assemble(b, opts, len(nodes), meta, func(k int) parts { return counts[k] }), nil
}

// nodeMeta is what aggregation needs of a node besides its counts.
type nodeMeta struct {
	id, role, category string
}

// metaAt is nodeMeta of the stored node at index i, from the index alone.
func metaAt(s *transcript.Session, i int) nodeMeta {
	role := s.RoleAt(i)
	m := nodeMeta{id: s.ID(i), role: string(role)}
	switch {
	case s.IsSummary(i):
		m.category = CatSummary
	case role == transcript.RoleSystem:
		m.category = CatSystem
	case role == transcript.RoleTool:
		m.category = CatToolResults
	case role == transcript.RoleAssistant:
		m.category = CatAssistant
	default:
		m.category = CatUser
	}
	return m
}

// assemble sums the counts of n nodes (in reading order) into a Result
// with the budget arithmetic. The nodes are given by accessors, so a view
// of a million nodes needs no per-node copy.
func assemble(b BudgetInfo, opts Options, n int, metaOf func(k int) nodeMeta, countOf func(k int) parts) *Result {
	res := &Result{Model: b.Model, Provider: b.Provider, Encoding: b.Encoding, EncodingIsProxy: b.EncodingIsProxy,
		Window: b.Window, OutputReserve: b.OutputReserve, InputBudget: b.InputBudget, Categories: map[string]int{}}
	for _, c := range Categories {
		res.Categories[c] = 0
	}
	anyTools := false
	for k := range n {
		p, m := countOf(k), metaOf(k)
		res.Categories[m.category] += int(p.Text)
		res.Categories[CatThinking] += int(p.Thinking)
		res.Categories[CatToolCalls] += int(p.Calls)
		res.Categories[CatToolResults] += int(p.Results)
		res.Categories[CatImages] += int(p.Images)
		res.Categories[CatTools] += int(p.ToolDefs)
		res.Categories[CatOverhead] += int(p.Overhead)
		res.Total += p.total()
		anyTools = anyTools || p.ToolDefs > 0
		if opts.NodeDetail {
			res.Nodes = append(res.Nodes, NodeCount{ID: m.id, Role: m.role, Category: m.category, ContentTokens: p.content(), Tokens: p.total()})
		}
	}
	extra := viewExtras(b.Provider, n, anyTools)
	res.Total += extra
	res.Categories[CatOverhead] += extra
	res.setBudget(b, opts)
	return res
}

func (r *Result) setBudget(b BudgetInfo, opts Options) {
	if b.Window > 0 {
		r.Ratio = float64(r.Total) / float64(b.Window)
	}
	if b.InputBudget > 0 {
		r.BudgetPct = 100 * float64(r.Total) / float64(b.InputBudget)
	}
	at := opts.CompactAt
	if at <= 0 {
		at = DefaultCompactAt
	}
	r.ShouldCompact = b.InputBudget > 0 && r.BudgetPct >= 100*at
}

// View measures a rendered view: the same figures Nodes gives on the
// view's nodes, with per-node counts cached in the session directory and,
// unless opts.NoCalibrate, calibration against recorded usage.
func View(ctx context.Context, v *render.View, opts Options) (*Result, error) {
	b, err := resolve(opts)
	if err != nil {
		return nil, err
	}
	s := v.Graph.S
	idx := v.Indexes
	// Calibration re-estimates past requests along HEAD's raw spine. With
	// no summary in the session the view is that spine; otherwise the
	// covered nodes and every summary (an older request may have read a
	// relic) are counted too, but only when some assistant node on the
	// spine recorded usage.
	var spine []int
	want := idx
	if !opts.NoCalibrate && v.Head >= 0 {
		spine = v.Graph.Spine(v.Head)
		var summaries []int
		for i := range s.Len() {
			if s.IsSummary(i) {
				summaries = append(summaries, i)
			}
		}
		if len(summaries) > 0 || len(spine) != len(idx) {
			if anyUsage(s, spine) {
				want = unionIndexes(s.Len(), idx, spine, summaries)
			} else {
				spine = nil
			}
		}
	}
	counts, err := countStored(ctx, s, want, b, opts)
	if err != nil {
		return nil, err
	}
	res := assemble(b, opts, len(idx), func(k int) nodeMeta { return metaAt(s, idx[k]) }, func(k int) parts { return counts[idx[k]] })
	res.Session = s.Dir
	if v.Head >= 0 {
		res.Head = s.ID(v.Head)
	}
	if spine != nil {
		res.Calibration = calibrate(v.Graph, spine, counts, b, res)
	}
	return res, nil
}

// anyUsage reports whether an assistant node on spine recorded usage, by
// looking for the key in the stored line (no decoding).
func anyUsage(s *transcript.Session, spine []int) bool {
	for _, i := range spine {
		if s.Ref(i).Role != transcript.RoleAssistant {
			continue
		}
		raw, err := s.RawLine(i)
		if err == nil && containsUsage(raw) {
			return true
		}
	}
	return false
}

// unionIndexes merges lists of node indexes below n, dropping repeats.
func unionIndexes(n int, lists ...[]int) []int {
	seen := make([]bool, n)
	var out []int
	for _, list := range lists {
		for _, i := range list {
			if !seen[i] {
				seen[i] = true
				out = append(out, i)
			}
		}
	}
	return out
}

// PerNode counts arbitrary stored nodes (graph shows a count on every node,
// covered ones too), cached like View. The result is in the order of
// indexes.
func PerNode(ctx context.Context, s *transcript.Session, indexes []int, opts Options) ([]NodeCount, error) {
	b, err := resolve(opts)
	if err != nil {
		return nil, err
	}
	for _, i := range indexes {
		if i < 0 || i >= s.Len() {
			return nil, fmt.Errorf("%s: node index %d out of range (%d nodes)", s.Dir, i, s.Len())
		}
	}
	counts, err := countStored(ctx, s, unionIndexes(s.Len(), indexes), b, opts)
	if err != nil {
		return nil, err
	}
	out := make([]NodeCount, len(indexes))
	for k, i := range indexes {
		m := metaAt(s, i)
		p := counts[i]
		out[k] = NodeCount{ID: m.id, Role: m.role, Category: m.category, ContentTokens: p.content(), Tokens: p.total()}
	}
	return out, nil
}

// countStored counts stored nodes by index, on all cores, through the
// cache: a node whose line hash is cached costs one read and one hash and
// no BPE work. The result is indexed by node index (s.Len()); entries
// not asked for are zero. idx must not repeat an index.
func countStored(ctx context.Context, s *transcript.Session, idx []int, b BudgetInfo, opts Options) ([]parts, error) {
	warn := opts.Warn
	if warn == nil {
		warn = func(string) {}
	}
	var cache *countCache
	if !opts.NoCache {
		cache = loadCache(s.Dir, warn)
	}
	profile := profileOf(b)
	results := make([]parts, s.Len())
	var mu sync.Mutex
	var news []fresh
	err := parallel(ctx, len(idx), workers(opts), b.Encoding, func(lc *lazyCounter, k int) error {
		i := idx[k]
		raw, err := s.RawLine(i)
		if err != nil {
			return err
		}
		var key cacheKey
		if cache != nil {
			key = keyOf(profile, raw)
			if p, ok := cache.get(key); ok {
				results[i] = p
				return nil
			}
		}
		n, err := s.Node(i)
		if err != nil {
			return err
		}
		c, err := lc.get()
		if err != nil {
			return err
		}
		p := countNode(c, b.Provider, n)
		bpeNodes.Add(1)
		results[i] = p
		if cache != nil {
			mu.Lock()
			news = append(news, fresh{key, p})
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if cache != nil && len(news) > 0 {
		// A read-only session is simply not cached.
		if err := cache.save(news); err != nil && !errors.Is(err, fs.ErrPermission) && !errors.Is(err, syscall.EROFS) {
			warn("count cache not saved: " + err.Error())
		}
	}
	return results, nil
}

// bpeNodes counts stored nodes tokenized (cache misses); tests read it to
// prove a warm run does no BPE work.
var bpeNodes atomic.Int64

// lazyCounter gives a worker its counter on first use, so a run served
// entirely from the cache never loads a rank table.
type lazyCounter struct {
	enc string
	c   *counter
}

func (l *lazyCounter) get() (*counter, error) {
	if l.c == nil {
		c, err := getCounter(l.enc)
		if err != nil {
			return nil, err
		}
		l.c = c
	}
	return l.c, nil
}

func (l *lazyCounter) release() {
	if l.c != nil {
		putCounter(l.c)
		l.c = nil
	}
}

// parallel runs fn for k in [0, n) on up to w goroutines, each with its
// own counter, in batches so the queue is not a bottleneck. The first
// error (or the context's) stops the rest.
func parallel(ctx context.Context, n, w int, enc string, fn func(lc *lazyCounter, k int) error) error {
	if _, ok := tables[enc]; !ok {
		return &UnknownEncodingError{Name: enc}
	}
	if n == 0 {
		return nil
	}
	const batch = 32
	w = max(1, min(w, (n+batch-1)/batch))
	var next atomic.Int64
	var firstErr error
	var errOnce sync.Once
	var failed atomic.Bool
	setErr := func(err error) {
		errOnce.Do(func() { firstErr = err })
		failed.Store(true)
	}
	var wg sync.WaitGroup
	for g := 0; g < w; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lc := &lazyCounter{enc: enc}
			defer lc.release()
			for !failed.Load() {
				if err := ctx.Err(); err != nil {
					setErr(err)
					return
				}
				start := int(next.Add(batch)) - batch
				if start >= n {
					return
				}
				for k := start; k < min(start+batch, n); k++ {
					if err := fn(lc, k); err != nil {
						setErr(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}
