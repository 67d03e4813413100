// Package estimate owns every token figure ctxfold prints: exact offline
// BPE counts of the rendered view (docs/ESTIMATE.md: one measurement basis),
// its breakdown by category, the output reserve and input budget of a
// model, and calibration against provider-recorded usage. Nothing outside
// this package counts tokens. It does not decide what the model reads
// (render/ does) and never writes a session; the only files it writes are
// its own caches inside a session directory's cache/ (CacheFile,
// ViewCacheFile), which are safe to delete.
package estimate

import (
	"context"
	"fmt"
	"runtime"

	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// DefaultCompactAt is the budget share at which a session should compact
// (docs/COMPACT.md §5: compact if ≥ 80%).
const DefaultCompactAt = 0.80

// Options select the model and the budget arithmetic, and tune the work.
type Options struct {
	// Model names the model (resolved through Models, then the built-in
	// table). "" with no Window counts tokens without a budget.
	Model string
	// ModelAssumed is set by ForSession when Model is the client's
	// default, not one the session, the user or the config named.
	ModelAssumed bool
	// Encoding overrides the model's encoding ("" means the model's).
	Encoding string
	// Window and MaxOutput override the model's context window and output
	// capability; OutputCap is an explicit output reserve used as given.
	Window    int
	MaxOutput int
	OutputCap int
	// RecordedWindow is the window the session itself records (session
	// metadata, RecordedWindow); it beats the table, --window beats it.
	RecordedWindow int
	// RecordedWindowSource is WindowFromClientConfig when that window is
	// the client's configuration's, "" (WindowFromSession) otherwise; Client
	// is the session's client (session.json's imported_from), whose config
	// key an unknown model's hint names.
	RecordedWindowSource string
	Client               string
	// Models extends or overrides the built-in table (the config's models:).
	Models map[string]Model
	// CompactAt is the budget share for should_compact (0: 0.80).
	CompactAt float64
	// NodeDetail fills Result.Nodes.
	NodeDetail bool
	// NoCalibrate turns calibration off: View fits none and Nodes applies
	// no Correction; the gates use the raw total.
	NoCalibrate bool
	// Correction, when set, is a calibration fitted on another view of the
	// same session (compact's view before it folds, render --fit's
	// session): Nodes reports the calibrated total beside the raw one and
	// the budget figures use it. View fits its own and ignores this.
	Correction *Correction
	// NoCache neither reads nor writes the count cache (View, PerNode).
	NoCache bool
	// Workers bounds tokenizing goroutines (0: GOMAXPROCS).
	Workers int
	// Warn receives non-fatal problems (a corrupt cache); nil drops them.
	Warn func(msg string)
	// Counting, when set, receives how many stored nodes a count is about
	// to go through (a progress reporter's AddTotal); Counted the number
	// done after each batch (its Add), from many goroutines at once.
	Counting func(total int)
	Counted  func(n int)
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
	Session string `json:"session"`
	// File is the transcript file Session was imported from, when the
	// command was given the file (docs/LIVE.md).
	File  string `json:"file,omitempty"`
	Head  string `json:"head,omitempty"`
	Model string `json:"model"`
	// ModelAssumed: the session records no model and none was configured,
	// so Model is its client's default (ClientDefaultModel).
	ModelAssumed    bool   `json:"model_assumed,omitempty"`
	Provider        string `json:"provider"`
	Encoding        string `json:"encoding"`
	EncodingIsProxy bool   `json:"encoding_is_proxy"`
	// ResolvedModel, ModelRule and WindowSource: see BudgetInfo.
	ResolvedModel string  `json:"resolved_model,omitempty"`
	ModelRule     string  `json:"model_rule,omitempty"`
	WindowSource  string  `json:"window_source,omitempty"`
	Window        int     `json:"window"`
	OutputReserve int     `json:"output_reserve"`
	InputBudget   int     `json:"input_budget"`
	Total         int     `json:"total"`
	Ratio         float64 `json:"ratio"`
	// BudgetPct is the gated figure as a percentage of InputBudget: the
	// calibrated total when a calibration exists (BudgetBasis
	// "calibrated"), else Total ("raw"); Ratio and ShouldCompact follow it.
	// RawRatio, RawBudgetPct and RawShouldCompact are always Total's.
	BudgetPct        float64        `json:"budget_pct"`
	ShouldCompact    bool           `json:"should_compact"`
	BudgetBasis      string         `json:"budget_basis"`
	RawRatio         float64        `json:"raw_ratio"`
	RawBudgetPct     float64        `json:"raw_budget_pct"`
	RawShouldCompact bool           `json:"raw_should_compact"`
	Categories       map[string]int `json:"categories"`
	Calibration      *Calibration   `json:"calibration"`
	Nodes            []NodeCount    `json:"nodes,omitempty"`
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
func profileOf(b BudgetInfo) string { return RulesVersion + "/" + b.Encoding + "/" + b.Provider }

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
	var t tally
	for k, n := range nodes {
		t.add(categoryFor(n.IsSummary(), n.Role), counts[k])
	}
	res := t.result(b, opts, len(nodes))
	if opts.Correction != nil && !opts.NoCalibrate {
		res.applyCorrection(opts.Correction, b, opts)
	}
	if opts.NodeDetail {
		res.Nodes = make([]NodeCount, len(nodes))
		for k, n := range nodes {
			res.Nodes[k] = nodeCount(n.ID, n.Role, categoryFor(n.IsSummary(), n.Role), counts[k])
		}
	}
	return res, nil
}

// categoryFor is the category of a node's own text.
func categoryFor(summary bool, role transcript.Role) int {
	switch {
	case summary:
		return catSummary
	case role == transcript.RoleSystem:
		return catSystem
	case role == transcript.RoleTool:
		return catToolResults
	case role == transcript.RoleAssistant:
		return catAssistant
	}
	return catUser
}

// Category indexes into Categories.
const (
	catSystem = iota
	catTools
	catSummary
	catUser
	catAssistant
	catToolCalls
	catToolResults
	catThinking
	catImages
	catOverhead
	numCategories
)

func nodeCount(id string, role transcript.Role, category int, p parts) NodeCount {
	return NodeCount{ID: id, Role: string(role), Category: Categories[category], ContentTokens: p.content(), Tokens: p.total()}
}

// tally sums node counts by category. Each tokenizing goroutine keeps its
// own; they merge at the end, so no per-node copy of a view is kept.
type tally struct {
	cats     [numCategories]int
	nodes    int
	total    int
	anyTools bool
}

func (t *tally) add(category int, p parts) {
	t.cats[category] += int(p.Text)
	t.cats[catThinking] += int(p.Thinking)
	t.cats[catToolCalls] += int(p.Calls)
	t.cats[catToolResults] += int(p.Results)
	t.cats[catImages] += int(p.Images)
	t.cats[catTools] += int(p.ToolDefs)
	t.cats[catOverhead] += int(p.Overhead)
	t.total += p.total()
	t.nodes++
	t.anyTools = t.anyTools || p.ToolDefs > 0
}

func (t *tally) merge(o *tally) {
	for c := range t.cats {
		t.cats[c] += o.cats[c]
	}
	t.nodes += o.nodes
	t.total += o.total
	t.anyTools = t.anyTools || o.anyTools
}

// result is the Result of a view of n nodes with the budget arithmetic.
func (t *tally) result(b BudgetInfo, opts Options, n int) *Result {
	res := &Result{Model: b.Model, Provider: b.Provider, Encoding: b.Encoding, EncodingIsProxy: b.EncodingIsProxy,
		ResolvedModel: b.ResolvedModel, ModelRule: b.ModelRule, WindowSource: b.WindowSource,
		Window: b.Window, OutputReserve: b.OutputReserve, InputBudget: b.InputBudget, Categories: map[string]int{}}
	for c, name := range Categories {
		res.Categories[name] = t.cats[c]
	}
	res.Total = t.total
	extra := viewExtras(b.Provider, n, t.anyTools)
	res.Total += extra
	res.Categories[CatOverhead] += extra
	res.setBudget(b, opts)
	return res
}

// Budget bases (Result.BudgetBasis).
const (
	BasisRaw        = "raw"
	BasisCalibrated = "calibrated"
)

// setBudget fills the budget figures from total (the gated one) and
// Total (the raw one).
func (r *Result) setBudget(b BudgetInfo, opts Options) {
	at := opts.CompactAt
	if at <= 0 {
		at = DefaultCompactAt
	}
	figures := func(total int) (ratio, pct float64, compact bool) {
		if b.Window > 0 {
			ratio = float64(total) / float64(b.Window)
		}
		if b.InputBudget > 0 {
			pct = 100 * float64(total) / float64(b.InputBudget)
		}
		return ratio, pct, b.InputBudget > 0 && pct >= 100*at
	}
	r.RawRatio, r.RawBudgetPct, r.RawShouldCompact = figures(r.Total)
	r.Ratio, r.BudgetPct, r.ShouldCompact, r.BudgetBasis = r.RawRatio, r.RawBudgetPct, r.RawShouldCompact, BasisRaw
	if c := r.Calibration; c != nil {
		r.Ratio, r.BudgetPct, r.ShouldCompact = figures(c.CalibratedTotal)
		r.BudgetBasis = BasisCalibrated
	}
}

// applyCorrection calibrates a Nodes result with a correction fitted on
// another view of the session.
func (r *Result) applyCorrection(c *Correction, b BudgetInfo, opts Options) {
	cal := &Calibration{Method: c.Method, Slope: c.Slope, UnrecordedTokens: c.UnrecordedTokens, CarriedTokens: c.CarriedTokens,
		FramingTokens: c.FramingTokens, CalibratedTotal: c.Apply(r.Total)}
	if b.InputBudget > 0 {
		cal.CalibratedBudgetPct = 100 * float64(cal.CalibratedTotal) / float64(b.InputBudget)
	}
	r.Calibration = cal
	r.setBudget(b, opts)
}

// View measures a rendered view: the same figures Nodes gives on the
// view's nodes, with per-node counts cached in the session directory and,
// unless opts.NoCalibrate, calibration against recorded usage. Memory is
// a few bytes a node beyond the session's index: counts are summed as they
// are made, and lines and cache entries are read a run at a time.
func View(ctx context.Context, v *render.View, opts Options) (*Result, error) {
	res, _, err := measureView(ctx, v, opts)
	return res, err
}

// measureView is View, also returning what an incremental run needs of it
// (incremental.go).
func measureView(ctx context.Context, v *render.View, opts Options) (*Result, *viewState, error) {
	b, err := resolve(opts)
	if err != nil {
		return nil, nil, err
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
		spine = idx // the raw spine, unless a summary substituted
		if v.Summarized() {
			spine = v.Graph.Spine(v.Head)
		}
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
	nw := workers(opts)
	tallies := make([]tally, nw)
	var detail []parts
	if opts.NodeDetail {
		detail = make([]parts, len(idx))
	}
	var slims []slimCount
	if spine != nil {
		slims = make([]slimCount, s.Len())
	}
	var lead leadTotals
	// want starts with idx, in order: position k < len(idx) is view node k.
	err = countStored(ctx, s, want, b, opts, nw, func(w, k, i int, p parts) {
		if k < len(idx) {
			lead.keep(k, p)
			tallies[w].add(categoryFor(s.IsSummary(i), s.RoleAt(i)), p)
			if detail != nil {
				detail[k] = p
			}
		}
		if slims != nil {
			slims[i] = slimCount{measured: p.Measured, hidden: p.Hidden, total: int32(p.total()), overhead: p.Overhead, tools: p.ToolDefs > 0, tokenizer: p.Tokenizer}
		}
	})
	if err != nil {
		return nil, nil, err
	}
	for w := 1; w < nw; w++ {
		tallies[0].merge(&tallies[w])
	}
	res := tallies[0].result(b, opts, len(idx))
	if detail != nil {
		res.Nodes = nodeCounts(s, idx, detail)
	}
	res.Session = s.Dir
	if v.Head >= 0 {
		res.Head = s.ID(v.Head)
	}
	st := &viewState{tally: tallies[0]}
	if spine != nil {
		st.calib = calibrateView(v, spine, slims, b, opts, res)
	}
	if res.Calibration == nil && !opts.NoCalibrate && len(idx) > 0 {
		applyPrior(s, idx, lead[:], b, opts, res)
	}
	return res, st, nil
}

// nodeCounts is the per-node detail of the view idx of s.
func nodeCounts(s *store.Session, idx []int, detail []parts) []NodeCount {
	out := make([]NodeCount, len(idx))
	for k, i := range idx {
		out[k] = nodeCount(s.ID(i), s.RoleAt(i), categoryFor(s.IsSummary(i), s.RoleAt(i)), detail[k])
	}
	return out
}

// calibrateView calibrates res on HEAD's raw spine and returns the state
// an incremental run extends.
func calibrateView(v *render.View, spine []int, slims []slimCount, b BudgetInfo, opts Options, res *Result) *calibBasis {
	var reqs []MatchedRequest
	var h headState
	res.Calibration, reqs, h = calibrate(v.Graph, spine, v.Substitution.Summary, slims, b, res)
	res.setBudget(b, opts)
	c := newCalibBasis(v.Graph, spine, slims, reqs)
	c.Head = h
	return c
}

// slimCount is what calibration needs of a node's count.
type slimCount struct {
	measured  int64
	hidden    int32
	total     int32
	overhead  int32
	tools     bool
	tokenizer uint8
}

// anyUsage reports whether an assistant node on spine recorded usage, by
// looking for the key in the stored line (no decoding).
func anyUsage(s *store.Session, spine []int) bool {
	for _, i := range spine {
		if s.RoleAt(i) != transcript.RoleAssistant {
			continue
		}
		raw, err := s.RawLine(i)
		if err == nil && containsUsage(raw) {
			return true
		}
	}
	return false
}

// unionIndexes merges lists of node indexes below n, dropping repeats; the
// first list comes first, in its order.
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
func PerNode(ctx context.Context, s *store.Session, indexes []int, opts Options) ([]NodeCount, error) {
	b, err := resolve(opts)
	if err != nil {
		return nil, err
	}
	for _, i := range indexes {
		if i < 0 || i >= s.Len() {
			return nil, fmt.Errorf("%s: node index %d out of range (%d nodes)", s.Dir, i, s.Len())
		}
	}
	// Counts by node index: 8 bytes a node, whatever the share asked for.
	uniq := unionIndexes(s.Len(), indexes)
	contents := make([]int32, s.Len())
	totals := make([]int32, s.Len())
	err = countStored(ctx, s, uniq, b, opts, workers(opts), func(_, _, i int, p parts) {
		contents[i], totals[i] = int32(p.content()), int32(p.total())
	})
	if err != nil {
		return nil, err
	}
	out := make([]NodeCount, len(indexes))
	for k, i := range indexes {
		role := s.RoleAt(i)
		out[k] = NodeCount{ID: s.ID(i), Role: string(role), Category: Categories[categoryFor(s.IsSummary(i), role)],
			ContentTokens: int(contents[i]), Tokens: int(totals[i])}
	}
	return out, nil
}
