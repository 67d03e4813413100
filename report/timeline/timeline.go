// Package timeline owns `ctxfold report`'s data and page: a session's
// recorded requests beside estimate's calibrated figure at the same cut
// (estimate.Series), its compactions with audit's survival, and what fills
// the window now, gathered from the one estimate/audit core into Data, and
// drawn as one self-contained HTML page (html.go: inline CSS and SVG, no
// script needed to read it, no network). It counts nothing itself.
package timeline

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// Options select the session's view and the model it is counted for.
type Options struct {
	// Estimate counts the view; its Model is the explicit choice only
	// (estimate.Options.ForSession resolves the rest).
	Estimate     estimate.Options
	DefaultModel string
	// Head draws the session up to this node instead of HEAD.
	Head string
	Open store.OpenOptions
	// File is the transcript file the session is the cache of ("" for a
	// session directory).
	File string
	// Largest is how many of the view's largest nodes to list (0: 24).
	Largest int
}

// Data is the report's object: the page embeds it and --json prints it.
type Data struct {
	Session string `json:"session"`
	File    string `json:"file,omitempty"`
	Head    string `json:"head"`
	Model   string `json:"model"`
	// Window, InputBudget and CompactAt (the token figure at which the
	// session should compact: estimate's should_compact share of the
	// budget) are the timeline's lines; 0 when the model is unknown.
	Window      int `json:"window"`
	InputBudget int `json:"input_budget"`
	CompactAt   int `json:"compact_at"`
	// Total and Calibrated are the current view's raw and calibrated
	// totals (Calibrated is Total without a recorded request).
	Total      int            `json:"total"`
	Calibrated int            `json:"calibrated"`
	Categories map[string]int `json:"categories"`
	// Requests are HEAD's recorded requests in spine order, then the
	// sub-agents' (Subagent, recorded only).
	Requests    []Request    `json:"requests"`
	Compactions []Compaction `json:"compactions"`
	Largest     []LargeNode  `json:"largest"`
	Warnings    []string     `json:"warnings,omitempty"`
}

// Request is one recorded request: the provider's input for it and
// estimate's figure at the same cut (estimate.SeriesPoint).
type Request struct {
	Index    int    `json:"index"`
	Node     string `json:"node"`
	Recorded int64  `json:"recorded"`
	// Estimated is null for the first request (no earlier request
	// calibrates it; Raw is its uncalibrated count) and for a sub-agent's
	// request (its view is not on HEAD's spine, which the calibration
	// fits).
	Estimated       *int   `json:"estimated"`
	Raw             int    `json:"raw,omitempty"`
	Calibrated      bool   `json:"calibrated"`
	AfterCompaction bool   `json:"after_compaction,omitempty"`
	Subagent        bool   `json:"subagent,omitempty"`
	Time            string `json:"time"`
	Model           string `json:"model"`
	// fileIdx places the request among the others in file order.
	fileIdx int
}

// Compaction is one summary node: where it falls among the requests, the
// figures before and after it, and audit's survival of its facts.
type Compaction struct {
	Summary string `json:"summary"`
	// Source is who wrote it ("ctxfold" or the client); Status "active"
	// or "relic".
	Source string `json:"source"`
	Status string `json:"status"`
	Time   string `json:"time"`
	// AfterRequest is the index of the last request before the summary
	// (file order), -1 for none.
	AfterRequest int `json:"after_request"`
	// Before is that request's recorded input; After the next request's,
	// or the current view's calibrated total when the summary is the one
	// HEAD's view substitutes and no request followed it (AfterBasis says
	// which: "recorded", "estimated" or "" when neither is known).
	Before      int64          `json:"before"`
	After       int64          `json:"after"`
	AfterBasis  string         `json:"after_basis"`
	Facts       int            `json:"facts"`
	Kept        int            `json:"kept"`
	SurvivalPct float64        `json:"survival_pct"`
	Kinds       []KindSurvival `json:"kinds"`
	Dropped     []audit.Fact   `json:"dropped"`
	DroppedMore int            `json:"dropped_more,omitempty"`
}

// KindSurvival is audit's survival of one kind of fact.
type KindSurvival struct {
	Kind        audit.Kind `json:"kind"`
	Total       int        `json:"total"`
	Kept        int        `json:"kept"`
	SurvivalPct float64    `json:"survival_pct"`
}

// LargeNode is one of the view's largest nodes.
type LargeNode struct {
	ID       string `json:"id"`
	Role     string `json:"role"`
	Category string `json:"category"`
	Tool     string `json:"tool"`
	Tokens   int    `json:"tokens"`
	Snippet  string `json:"snippet"`
}

// maxDropped is how many dropped facts a compaction lists, most valuable
// first (audit.Rank); the rest are counted.
const maxDropped = 40

// EmptyError: the session has no node to report on.
type EmptyError struct{ Dir string }

func (e *EmptyError) Error() string {
	return fmt.Sprintf("%s: nothing to report: the session has no nodes", e.Dir)
}

// Build gathers the report of the session in dir: estimate.Session (the
// stored view, or the incremental or full path) for the current view and
// its matched requests, estimate.Series for each request's cut, one
// dag.Open for times, sub-agents, the largest nodes and audit.
func Build(ctx context.Context, dir string, opts Options) (*Data, error) {
	e := opts.Estimate
	e.NodeDetail = true
	g, err := dag.Open(dir, opts.Open)
	if err != nil {
		return nil, err
	}
	defer g.S.Close()
	if g.Len() == 0 {
		return nil, &EmptyError{Dir: dir}
	}
	sr := estimate.Session(ctx, dir, estimate.SessionOptions{Estimate: e, DefaultModel: opts.DefaultModel, Head: opts.Head, Open: opts.Open})
	if sr.Err != nil {
		return nil, sr.Err
	}
	res := sr.Result
	d := &Data{Session: dir, File: opts.File, Head: res.Head, Model: res.Model, Window: res.Window, InputBudget: res.InputBudget,
		Total: res.Total, Calibrated: res.Total, Categories: res.Categories, Warnings: sr.Warnings}
	if d.Head == "" {
		d.Head = g.ID(g.Head())
	}
	if res.InputBudget > 0 {
		share := e.CompactAt
		if share <= 0 {
			share = estimate.DefaultCompactAt
		}
		d.CompactAt = int(share * float64(res.InputBudget))
	}
	var series []estimate.SeriesPoint
	if c := res.Calibration; c != nil {
		d.Calibrated, series = c.CalibratedTotal, c.Series()
	}
	if err := d.addRequests(g, series); err != nil {
		return nil, err
	}
	if err := d.addCompactions(ctx, g, opts.Head); err != nil {
		return nil, err
	}
	n := opts.Largest
	if n <= 0 {
		n = 24
	}
	if err := d.addLargest(g, res.Nodes, n); err != nil {
		return nil, err
	}
	return d, nil
}

// addRequests fills Requests from the series (HEAD's spine), then the
// sub-agents' recorded requests: assistant nodes with usage off the
// spine whose chain starts at a spawned node (a caller).
func (d *Data) addRequests(g *dag.Graph, series []estimate.SeriesPoint) error {
	onSpine := map[int]bool{}
	for _, p := range series {
		i, ok := g.Lookup(p.Node)
		if !ok {
			return fmt.Errorf("%s: recorded request %q is not in the session", g.S.Dir, p.Node)
		}
		onSpine[i] = true
		n, err := g.S.Node(i)
		if err != nil {
			return err
		}
		var est *int
		if p.Calibrated {
			est = &p.Estimated
		}
		d.Requests = append(d.Requests, Request{Index: len(d.Requests), Node: p.Node, Recorded: p.Recorded, Estimated: est, Raw: p.Raw,
			Calibrated: p.Calibrated, AfterCompaction: p.AfterCompaction, Time: n.CreatedAt, Model: d.Model, fileIdx: i})
	}
	sub := spawnedNodes(g)
	for i := range g.Len() {
		if onSpine[i] || g.S.RoleAt(i) != transcript.RoleAssistant || !sub[i] {
			continue
		}
		n, err := g.S.Node(i)
		if err != nil {
			return err
		}
		if n.Usage == nil || estimate.RecordedInput(n.Usage) <= 0 {
			continue
		}
		d.Requests = append(d.Requests, Request{Index: len(d.Requests), Node: n.ID, Recorded: estimate.RecordedInput(n.Usage), Subagent: true,
			Time: n.CreatedAt, Model: d.Model, fileIdx: i})
	}
	return nil
}

// spawnedNodes marks the nodes whose chain of predecessors reaches a node
// a turn spawned (it has a caller): sub-agents' and side chains' nodes.
// A predecessor is always earlier in the file (docs/FORMAT.md), so one
// pass in file order decides each from its predecessor.
func spawnedNodes(g *dag.Graph) []bool {
	out := make([]bool, g.Len())
	for i := range out {
		p := g.Pred(i)
		out[i] = g.Caller(i) >= 0 || p >= 0 && p < i && out[p]
	}
	return out
}

// addCompactions audits every summary (audit --all) and places it among
// the requests by file order.
func (d *Data) addCompactions(ctx context.Context, g *dag.Graph, head string) error {
	results, err := audit.Run(ctx, g, audit.Options{All: true})
	var none *audit.NoSummaryError
	if errors.As(err, &none) {
		d.Compactions = []Compaction{}
		return nil
	}
	if err != nil {
		return err
	}
	// fileAt[k] is the file index of main request k, in spine order.
	var fileAt []int
	for _, r := range d.Requests {
		if !r.Subagent {
			i, _ := g.Lookup(r.Node)
			fileAt = append(fileAt, i)
		}
	}
	for _, r := range results {
		s, _ := g.Lookup(r.SummaryID)
		c := Compaction{Summary: r.SummaryID, Source: r.Source, Status: r.Status, AfterRequest: -1,
			Facts: r.Total, Kept: r.Kept, SurvivalPct: r.SurvivalPct}
		if n, err := g.S.Node(s); err == nil {
			c.Time = n.CreatedAt
		}
		after := sort.Search(len(fileAt), func(k int) bool { return fileAt[k] > s })
		if after > 0 {
			c.AfterRequest = after - 1
			c.Before = d.Requests[after-1].Recorded
		}
		switch {
		case after < len(fileAt):
			c.After, c.AfterBasis = d.Requests[after].Recorded, "recorded"
		case r.Status == "active" && head == "":
			c.After, c.AfterBasis = int64(d.Calibrated), "estimated"
		}
		c.Kinds, c.Dropped, c.DroppedMore = survival(r)
		d.Compactions = append(d.Compactions, c)
	}
	return nil
}

// survival is audit's result by kind and its dropped facts, most
// valuable first, at most maxDropped of them.
func survival(r *audit.Result) ([]KindSurvival, []audit.Fact, int) {
	kinds := make([]KindSurvival, 0, len(r.Kinds))
	var missing []audit.Fact
	for _, k := range r.Kinds {
		kinds = append(kinds, KindSurvival{Kind: k.Kind, Total: k.Total, Kept: k.Kept, SurvivalPct: k.SurvivalPct})
		missing = append(missing, k.Missing...)
	}
	missing = audit.Rank(missing)
	more := 0
	if len(missing) > maxDropped {
		more = len(missing) - maxDropped
		missing = missing[:maxDropped]
	}
	if missing == nil {
		missing = []audit.Fact{}
	}
	return kinds, missing, more
}

// OverwriteError: -o names something other than an HTML page (or a
// symlink); the report would destroy it, so nothing is written.
type OverwriteError struct{ Path, Why string }

func (e *OverwriteError) Error() string {
	return fmt.Sprintf("%s: not writing the report there: %s", e.Path, e.Why)
}

// Hint says what to do instead.
func (e *OverwriteError) Hint() string { return "choose another -o path, or remove the file first" }
