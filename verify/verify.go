// Package verify is the engine of 'ctxfold verify': it checks every
// invariant of a session — structure, summary nodes, rendering, tool-call
// adjacency and the event log — and streams each violation as a Finding,
// the way restic's checker does. docs/VERIFY.md documents every code.
//
// It reads sessions through transcript, builds the graph with dag and
// renders through render, so it judges a session by the same rules every
// other command applies. It never writes to a session, never formats
// findings for people and never imports cobra, viper, cmd/ or os.Std*.
//
// Cost is linear in nodes plus covered ids (plus one constant-time
// ancestry test per pair of summaries): every per-branch property is
// computed once per node along predecessor edges instead of once per
// branch tip.
package verify

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// Severity says whether a finding fails the check.
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Category groups findings in the human report.
type Category string

const (
	Structure Category = "structure"
	Summaries Category = "summaries"
	Rendering Category = "rendering"
	Tools     Category = "tools"
	Events    Category = "events"
)

// Categories lists the categories in report order.
var Categories = []Category{Structure, Summaries, Rendering, Tools, Events}

// Check codes added by verify. The structural codes of dag.New
// (store.CodeDuplicateID, store.CodeMissingPredecessor, …) are reported as they
// are. docs/VERIFY.md says what each means and how to fix it.
const (
	// Structure.
	CodeHeadSpineBroken   = "head_spine_broken"
	CodeInterruptedWrite  = "interrupted_write"   // warning
	CodeNodesHashMismatch = "nodes_hash_mismatch" // warning

	// Summaries (docs/FORMAT.md §4).
	CodeSummaryShape          = "summary_shape"
	CodeSummaryContentPrefix  = "summary_content_prefix"
	CodeSummaryUnflagged      = "summary_unflagged"
	CodeCoversEmpty           = "covers_empty"
	CodeCoversMissing         = "covers_missing"
	CodeCoversSummary         = "covers_summary"
	CodeCoversNotContiguous   = "covers_not_contiguous"
	CodeCoversDeadFork        = "covers_dead_fork"
	CodeSpliceMismatch        = "splice_mismatch"
	CodeCoversSplitsToolCall  = "covers_splits_tool_call"
	CodeSummaryNotExtending   = "summary_not_extending"
	CodeActiveSummaryUnset    = "active_summary_unset"         // warning
	CodeActiveSummaryNotLast  = "active_summary_not_latest"    // warning
	CodeActiveSummaryTextDiff = "active_summary_text_mismatch" // warning

	// Rendering (docs/FORMAT.md §4).
	CodeSummaryOnSpine       = "summary_on_spine"
	CodeRenderNotSubstituted = "render_not_substituted"
	CodeRenderMismatch       = "render_mismatch"

	// Tool adjacency in the rendered view.
	CodeToolCallUnanswered = "tool_call_unanswered"
	CodeToolResultOrphaned = "tool_result_orphaned"
	CodeToolCallPending    = "tool_call_pending" // warning
	CodeToolNodeInvalid    = "tool_node_invalid"

	// Events.
	CodeEventMalformed      = "event_malformed"
	CodeEventSummaryMissing = "event_summary_missing"
	CodeEventCountMismatch  = "event_count_mismatch"
	CodeUndoSummaryMissing  = "undo_summary_missing"
	// A compaction_started with no compaction_finished or compaction_failed
	// after it: the compaction was killed (warning).
	CodeCompactionInterrupted = "compaction_interrupted"
)

// Finding is one violation.
type Finding struct {
	Code     string
	Severity Severity
	Category Category
	// NodeID is the node at fault ("" when none); File and Line where it
	// is written (Line 0 when not applicable).
	NodeID string
	File   string
	Line   int
	Msg    string
}

// String reads "file:line: node "id": what was expected".
func (f Finding) String() string {
	loc := f.File
	if f.Line > 0 {
		loc = fmt.Sprintf("%s:%d", f.File, f.Line)
	}
	if f.NodeID != "" {
		return fmt.Sprintf("%s: node %q: %s", loc, f.NodeID, f.Msg)
	}
	return fmt.Sprintf("%s: %s", loc, f.Msg)
}

// Options tune a check.
type Options struct {
	// Strict reports warnings as errors.
	Strict bool
}

// Result counts what a check saw and found.
type Result struct {
	Nodes, Summaries, Tips int
	Errors, Warnings       int
}

// OK reports whether the session passed (no errors).
func (r *Result) OK() bool { return r.Errors == 0 }

// Dir opens the session in dir and checks it. A session that cannot be
// read (a line that does not parse, a bad session.json) is returned as the
// error — it is not a finding.
func Dir(ctx context.Context, dir string, open store.OpenOptions, opts Options, fn func(Finding)) (*Result, error) {
	s, err := store.Open(dir, open)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return Session(ctx, s, opts, fn)
}

// Session checks an open session and passes every finding to fn, category
// by category in report order, each category in file order. The error is
// non-nil only when ctx is done or a node cannot be re-read.
func Session(ctx context.Context, s *store.Session, opts Options, fn func(Finding)) (*Result, error) {
	c := &checker{ctx: ctx, s: s, opts: opts, res: &Result{Nodes: s.Len()}, fn: fn, subLast: -1}
	if err := c.run(); err != nil {
		return c.res, err
	}
	return c.res, nil
}

type checker struct {
	ctx  context.Context
	s    *store.Session
	g    *dag.Graph
	opts Options
	res  *Result
	fn   func(Finding)
	// buf holds the current category's findings until they are sorted.
	buf []Finding

	// order is every node whose chain reaches a root, by depth.
	order []int32
	// segs[k] is the k-th summary (file order) and its coverage.
	segs []*segment
	// active is the active summary's segment, nil when none; activeNode
	// its decoded node.
	active     *segment
	activeNode *transcript.Node
	// tips are the branch tips (dag.Graph.Tips).
	tips []int
	// subLast is the active segment's last node L when docs/FORMAT.md §4 accepts the
	// segment, -1 otherwise: then exactly L and the nodes below it render
	// with the summary (substitutes).
	subLast int
}

// substitutes reports whether rendering from x substitutes the active
// summary: x is L or lies below it (dag.Graph.IsAncestor, the one answer
// to that question).
func (c *checker) substitutes(x int) bool {
	return c.subLast >= 0 && c.g.IsAncestor(c.subLast, x)
}

type segment struct {
	summary int
	// first and last are the ends of the covered chain, n its length;
	// covered is the chain itself, kept for the active segment only
	// (checker.covered walks the others).
	first, last, n int
	covered        []int
	// contiguous is true when the coverage is a predecessor chain (missing,
	// summary or non-contiguous coverage leaves it false).
	contiguous bool
}

type pending struct {
	call string
	node int32
}

func (c *checker) add(cat Category, sev Severity, code string, node int, file string, line int, format string, args ...any) {
	f := Finding{Code: code, Severity: sev, Category: cat, File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
	if node >= 0 {
		r := c.s.Ref(node)
		f.NodeID = r.ID
		if f.File == "" {
			f.File, f.Line = c.s.NodesPath(), r.Line
		}
	}
	c.buf = append(c.buf, f)
}

// errAt and warnAt report against node i's line in nodes.jsonl.
func (c *checker) errAt(cat Category, code string, i int, format string, args ...any) {
	c.add(cat, Error, code, i, "", 0, format, args...)
}

func (c *checker) warnAt(cat Category, code string, i int, format string, args ...any) {
	c.add(cat, Warning, code, i, "", 0, format, args...)
}

// flush sorts the category's findings by file and line and streams them.
func (c *checker) flush() error {
	sort.SliceStable(c.buf, func(a, b int) bool {
		ra, rb := c.fileRank(c.buf[a].File), c.fileRank(c.buf[b].File)
		if ra != rb {
			return ra < rb
		}
		return c.buf[a].Line < c.buf[b].Line
	})
	for _, f := range c.buf {
		if f.Severity == Warning && c.opts.Strict {
			f.Severity = Error
		}
		if f.Severity == Error {
			c.res.Errors++
		} else {
			c.res.Warnings++
		}
		if c.fn != nil {
			c.fn(f)
		}
	}
	c.buf = c.buf[:0]
	return c.ctx.Err()
}

// fileRank orders findings: nodes.jsonl, then session.json, then the rest.
func (c *checker) fileRank(file string) int {
	switch file {
	case c.s.NodesPath():
		return 0
	case c.metaPath():
		return 1
	}
	return 2
}

func (c *checker) run() error {
	steps := []func() error{c.checkStructure, c.checkSummaries, c.checkRendering, c.checkTools, c.checkEvents}
	for _, step := range steps {
		if err := c.ctx.Err(); err != nil {
			return err
		}
		if err := step(); err != nil {
			return err
		}
		if err := c.flush(); err != nil {
			return err
		}
	}
	return nil
}

// checkStructure reports dag.New's integrity faults, HEAD's spine, and what
// reading noticed (an interrupted write).
func (c *checker) checkStructure() error {
	g, errs := dag.New(c.s)
	c.g = g
	for _, e := range errs {
		f := Finding{Code: e.Code, Severity: Error, Category: Structure, NodeID: e.NodeID, File: e.File, Line: e.Line, Msg: e.Msg}
		c.buf = append(c.buf, f)
	}
	if h := g.Head(); h >= 0 && g.Depth(h) < 0 {
		c.add(Structure, Error, CodeHeadSpineBroken, h, c.metaPath(), c.s.MetaKeyLine("head"),
			"HEAD's predecessor chain does not reach a root (a missing predecessor or a cycle above it)")
	}
	for _, w := range c.s.Warnings {
		c.buf = append(c.buf, Finding{Code: CodeInterruptedWrite, Severity: Warning, Category: Structure, File: w.File, Line: w.Line, Msg: w.Msg})
	}
	changed, err := c.s.CommittedBytesChanged()
	if err != nil {
		return err
	}
	if changed {
		c.buf = append(c.buf, Finding{Code: CodeNodesHashMismatch, Severity: Warning, Category: Structure, File: c.s.NodesPath(),
			Msg: fmt.Sprintf("the %d committed bytes no longer match nodes_sha256 in %s: they were changed outside ctxfold (the next write warns and restarts the hash chain from the file as it is)", c.s.CommittedBytes, store.MetaFile)})
	}
	c.order = depthOrder(g)
	return nil
}

// metaPath is session.json's path, spelled as dag.New spells it (findings
// from both sort and print alike, whatever trailing slash DIR had).
func (c *checker) metaPath() string { return filepath.Join(c.s.Dir, store.MetaFile) }

// depthOrder lists every node whose chain reaches a root, roots first, by
// a counting sort on depth: O(n).
func depthOrder(g *dag.Graph) []int32 {
	n := g.Len()
	maxDepth := -1
	for i := 0; i < n; i++ {
		maxDepth = max(maxDepth, g.Depth(i))
	}
	start := make([]int32, maxDepth+2)
	for i := 0; i < n; i++ {
		if d := g.Depth(i); d >= 0 {
			start[d+1]++
		}
	}
	for d := 1; d < len(start); d++ {
		start[d] += start[d-1]
	}
	order := make([]int32, start[len(start)-1])
	for i := 0; i < n; i++ {
		if d := g.Depth(i); d >= 0 {
			order[start[d]] = int32(i)
			start[d]++
		}
	}
	return order
}
