package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/transcript"
)

// Options select what Run audits.
type Options struct {
	// SummaryID audits that summary; "" the active one.
	SummaryID string
	// All audits every summary in the session, relics and imported ones
	// included, in file order.
	All bool
	// Pinned are node ids the user pinned: their facts are reported on
	// their own as well (Result.Pinned).
	Pinned map[string]bool
}

// FactResult is one fact and whether what the model reads still carries it.
type FactResult struct {
	Fact
	Kept   bool `json:"kept"`
	Pinned bool `json:"pinned,omitempty"`
	// Injected: not kept by the summary and the turns after it, but
	// carried by ctxfold's own injection (Result.InjectedIDs).
	Injected bool `json:"injected,omitempty"`
}

// KindResult is the survival of one kind of fact.
type KindResult struct {
	Kind        Kind    `json:"kind"`
	Total       int     `json:"total"`
	Kept        int     `json:"kept"`
	SurvivalPct float64 `json:"survival_pct"`
	// Missing are the facts absent from what the model reads, with the
	// nodes they came from.
	Missing []Fact `json:"missing"`
}

// Result is the audit of one summary.
type Result struct {
	SummaryID string `json:"summary_id"`
	// Status is "active" or "relic" (dag.Graph.IsRelic).
	Status string `json:"status"`
	// Source is who wrote the summary: "ctxfold", or the client it was
	// imported from ("claude-code", "codex", …).
	Source string `json:"source"`
	// CoveredNodes are the summary's covers_ids; SubtreeNodes the nodes of
	// their caller subtrees (sub-agents and side chains they spawned).
	CoveredNodes int `json:"covered_nodes"`
	SubtreeNodes int `json:"subtree_nodes"`
	// ReadIDs are the nodes the audit compares against: the summary and the
	// kept tail after its segment on HEAD's branch (root included), or the
	// summary alone when its segment is not on that branch (OnHeadBranch).
	ReadIDs      []string `json:"read_ids"`
	OnHeadBranch bool     `json:"on_head_branch"`
	Total        int      `json:"total"`
	Kept         int      `json:"kept"`
	SurvivalPct  float64  `json:"survival_pct"`
	// Kinds has one entry per kind in Kinds order, empty kinds included.
	Kinds []KindResult `json:"kinds"`
	// Pinned is the survival of the facts of pinned nodes (a subset of the
	// figures above), nil when none of the covered nodes is pinned.
	Pinned *KindResult `json:"pinned,omitempty"`
	// PinnedNodes says, for each pinned node among the covered ones and
	// their subtrees, whether its text is still read verbatim.
	PinnedNodes []PinnedNode `json:"pinned_nodes,omitempty"`
	Facts       []FactResult `json:"facts"`
	// InjectedIDs are the nodes read after the summary that are ctxfold's
	// own injection (the hook's "dropped facts" context, IsInjection):
	// they are not the summary's work, so a fact only they carry is not
	// kept; Injected counts those facts.
	InjectedIDs []string `json:"injected_ids,omitempty"`
	Injected    int      `json:"injected,omitempty"`
}

// Kind returns the entry of kind k.
func (r *Result) Kind(k Kind) KindResult {
	for _, kr := range r.Kinds {
		if kr.Kind == k {
			return kr
		}
	}
	return KindResult{Kind: k, SurvivalPct: 100}
}

// PinnedNode is one pinned node and whether what the model reads still
// holds its text verbatim (whitespace collapsed).
type PinnedNode struct {
	ID   string `json:"id"`
	Kept bool   `json:"kept"`
}

// NoSummaryError: the session has no summary to audit (or not the one
// asked for).
type NoSummaryError struct {
	Dir, ID string
}

func (e *NoSummaryError) Error() string {
	if e.ID != "" {
		return fmt.Sprintf("%s: %q is not a summary node", e.Dir, e.ID)
	}
	return fmt.Sprintf("%s: no active summary to audit (the session was never compacted)", e.Dir)
}

// Hint says what to do instead.
func (e *NoSummaryError) Hint() string {
	if e.ID != "" {
		return "list the summaries with 'ctxfold graph " + e.Dir + "' or audit them all with --all"
	}
	return "compact it first ('ctxfold compact " + e.Dir + "'), or pass --all to audit relics"
}

// Run audits the summaries opts selects.
func Run(ctx context.Context, g *dag.Graph, opts Options) ([]*Result, error) {
	var targets []int
	switch {
	case opts.SummaryID != "":
		i, ok := g.Lookup(opts.SummaryID)
		if !ok || !g.S.IsSummary(i) {
			return nil, &NoSummaryError{Dir: g.S.Dir, ID: opts.SummaryID}
		}
		targets = []int{i}
	case opts.All:
		for i := 0; i < g.Len(); i++ {
			if g.S.IsSummary(i) {
				targets = append(targets, i)
			}
		}
		if len(targets) == 0 {
			return nil, &NoSummaryError{Dir: g.S.Dir}
		}
	default:
		if g.ActiveSummary() < 0 {
			return nil, &NoSummaryError{Dir: g.S.Dir}
		}
		targets = []int{g.ActiveSummary()}
	}
	var out []*Result
	for _, s := range targets {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r, err := one(g, s, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func one(g *dag.Graph, s int, opts Options) (*Result, error) {
	sum, err := g.S.Node(s)
	if err != nil {
		return nil, err
	}
	res := &Result{SummaryID: sum.ID, Status: "active", Source: source(sum)}
	if g.IsRelic(s) {
		res.Status = "relic"
	}
	covered, ok := g.Covered(s)
	if !ok {
		return nil, fmt.Errorf("%s: summary %q covers a node that does not exist (run 'ctxfold verify')", g.S.Dir, sum.ID)
	}
	res.CoveredNodes = len(covered)
	sub := Subtrees(g, covered)
	res.SubtreeNodes = len(sub)
	load := func(idx []int) ([]*transcript.Node, error) {
		out := make([]*transcript.Node, 0, len(idx))
		for _, i := range idx {
			n, err := g.S.Node(i)
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		}
		return out, nil
	}
	nodes, err := load(covered)
	if err != nil {
		return nil, err
	}
	spawned, err := load(sub)
	if err != nil {
		return nil, err
	}
	facts := Extract(nodes, spawned)
	nodes = append(nodes, spawned...)

	hay, injected, err := readTexts(g, s, covered, res)
	if err != nil {
		return nil, err
	}
	m := NewMatcher(hay)
	pinnedFrom := map[string]bool{}
	for _, n := range nodes {
		if opts.Pinned[n.ID] {
			pinnedFrom[n.ID] = true
			kept := true
			for _, t := range PinnedTexts(n) {
				kept = kept && m.Has(Fact{Text: strings.TrimSpace(space.ReplaceAllString(t, " "))})
			}
			res.PinnedNodes = append(res.PinnedNodes, PinnedNode{ID: n.ID, Kept: kept})
		}
	}
	res.Facts, res.Kinds, res.Pinned = Score(facts, m, pinnedFrom)
	if injected != "" {
		im := NewMatcher(injected)
		for k := range res.Facts {
			if f := &res.Facts[k]; !f.Kept && im.Has(f.Fact) {
				f.Injected = true
				res.Injected++
			}
		}
	}
	for _, k := range res.Kinds {
		res.Total += k.Total
		res.Kept += k.Kept
	}
	res.SurvivalPct = pct(res.Kept, res.Total)
	return res, nil
}

// readTexts is what the model reads in place of the covered turns: the
// summary and the kept tail after its segment on HEAD's branch (root
// included), or the summary alone when its segment is not on that branch.
// ctxfold's own injections among them are returned apart (injected),
// since they are not the summary's work. It fills res.ReadIDs,
// OnHeadBranch and InjectedIDs.
func readTexts(g *dag.Graph, s int, covered []int, res *Result) (hay, injected string, err error) {
	reads := []int{s}
	if h := g.Head(); h >= 0 {
		spine := g.Spine(h)
		if at, ok := g.SegmentOnSpine(spine, covered, g.Pred(s)); ok {
			res.OnHeadBranch = true
			reads = append(append(append([]int(nil), spine[:at]...), s), spine[at+len(covered):]...)
		}
	}
	var read, inj strings.Builder
	for _, i := range reads {
		n, err := g.S.Node(i)
		if err != nil {
			return "", "", err
		}
		res.ReadIDs = append(res.ReadIDs, n.ID)
		if i != s && IsInjection(n) {
			res.InjectedIDs = append(res.InjectedIDs, n.ID)
			ReadText(&inj, n)
			continue
		}
		ReadText(&read, n)
	}
	return read.String(), inj.String(), nil
}

// reInjection is the first line of the context ctxfold's hook adds after
// a client's compaction (hook.Compose): "ctxfold: claude-code's
// compaction summary dropped 3 of the 10 facts of the turns it folded".
var reInjection = regexp.MustCompile(`ctxfold: [\w.-]+'s compaction summary dropped \d+ of the \d+ facts`)

// IsInjection reports whether n is ctxfold's own injected context, which
// the client records as a turn of the session (an attachment).
func IsInjection(n *transcript.Node) bool {
	return reInjection.MatchString(n.Content.PlainText())
}

// Score matches facts against m. A fact is pinned when one of its nodes is
// in pinned.
func Score(facts []Fact, m *Matcher, pinned map[string]bool) ([]FactResult, []KindResult, *KindResult) {
	byKind := map[Kind]*KindResult{}
	for _, k := range Kinds {
		byKind[k] = &KindResult{Kind: k, Missing: []Fact{}}
	}
	var pin *KindResult
	out := make([]FactResult, 0, len(facts))
	for _, f := range facts {
		fr := FactResult{Fact: f, Kept: m.Has(f)}
		for _, id := range f.NodeIDs {
			fr.Pinned = fr.Pinned || pinned[id]
		}
		kr := byKind[f.Kind]
		kr.Total++
		if fr.Kept {
			kr.Kept++
		} else {
			kr.Missing = append(kr.Missing, f)
		}
		if fr.Pinned {
			if pin == nil {
				pin = &KindResult{Kind: "pinned", Missing: []Fact{}}
			}
			pin.Total++
			if fr.Kept {
				pin.Kept++
			} else {
				pin.Missing = append(pin.Missing, f)
			}
		}
		out = append(out, fr)
	}
	kinds := make([]KindResult, 0, len(Kinds))
	for _, k := range Kinds {
		kr := byKind[k]
		kr.SurvivalPct = pct(kr.Kept, kr.Total)
		kinds = append(kinds, *kr)
	}
	if pin != nil {
		pin.SurvivalPct = pct(pin.Kept, pin.Total)
	}
	return out, kinds, pin
}

// pct is kept/total as a percentage with one decimal; 100 when there is
// nothing to keep.
func pct(kept, total int) float64 {
	if total == 0 {
		return 100
	}
	return float64(kept*1000/total) / 10
}

// Subtrees returns the nodes spawned, directly or through their own
// descendants, by a covered node (transcript.Node.Caller), in index order:
// the sub-agent a covered turn ran did that turn's work.
func Subtrees(g *dag.Graph, covered []int) []int {
	state := make([]int8, g.Len()) // 0 unknown, 1 in a subtree, 2 not
	isCovered := make(map[int]bool, len(covered))
	for _, c := range covered {
		isCovered[c] = true
	}
	// member walks up predecessors until a node whose state is known, a
	// covered node (the kept tail continues the covered turns; it is not
	// spawned by them) or a caller that decides, then marks the walk.
	// Recursion is only through callers, as deep as sub-agents nest
	// (dag.New rejects caller cycles).
	var member func(i int) int8
	member = func(i int) int8 {
		var path []int
		verdict := int8(2)
		for j := i; j >= 0; j = g.Pred(j) {
			if state[j] != 0 {
				verdict = state[j]
				break
			}
			if isCovered[j] {
				break
			}
			path = append(path, j)
			if c := g.Caller(j); c >= 0 && (isCovered[c] || member(c) == 1) {
				verdict = 1
				break
			}
		}
		for _, j := range path {
			state[j] = verdict
		}
		return verdict
	}
	var out []int
	for i := 0; i < g.Len(); i++ {
		if !isCovered[i] && member(i) == 1 {
			out = append(out, i)
		}
	}
	return out
}

// source names who wrote a summary node: an importer keeps the client's
// fields under its own metadata key.
func source(n *transcript.Node) string {
	// An importer may instead name the record it made the summary from
	// ("codex compacted record").
	var named string
	if json.Unmarshal(n.Metadata["source"], &named) == nil {
		for prefix, client := range map[string]string{"codex": "codex", "gemini": "gemini", "claude": "claude-code"} {
			if strings.HasPrefix(strings.ToLower(named), prefix) {
				return client
			}
		}
		// Otherwise the client is the name's first word ("droid
		// compaction_state", "crush summary message").
		if client, _, ok := strings.Cut(named, " "); ok && client != "" {
			return strings.ToLower(client)
		}
	}
	keys := make([]string, 0, len(n.Metadata))
	for k := range n.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch {
		case strings.HasPrefix(k, "claude_code"):
			return "claude-code"
		case strings.HasPrefix(k, "codex"):
			return "codex"
		case strings.HasPrefix(k, "gemini"):
			return "gemini"
		}
	}
	return "ctxfold"
}

// PinnedTexts is what pinning n keeps verbatim (docs/FORMAT.md §9): its
// text, or — for a node with none of its own — its shell commands (other
// tools as name and arguments) and its tool results' text.
func PinnedTexts(n *transcript.Node) []string {
	if t := strings.TrimSpace(n.Content.PlainText()); t != "" {
		return []string{t}
	}
	var out []string
	for _, c := range n.AllToolCalls() {
		if cmd := c.ShellCommand(); cmd != "" {
			out = append(out, cmd)
		} else {
			out = append(out, c.Name+" "+c.ArgumentsText())
		}
	}
	for _, r := range n.ToolResults() {
		if t := strings.TrimSpace(r.Text); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// ReadText appends what the model reads of n: its text, its tool calls'
// names and argument strings, its tool results — each once: a tool node
// (OpenAI layout) whose text is its result is not written twice.
func ReadText(b *strings.Builder, n *transcript.Node) {
	b.WriteString(n.Content.PlainText())
	b.WriteByte('\n')
	for _, c := range n.AllToolCalls() {
		b.WriteString(c.Name + " ")
		argText := c.ArgumentsText()
		var v any
		if json.Unmarshal([]byte(argText), &v) == nil {
			for _, s := range transcript.JSONStrings(v) {
				b.WriteString(s)
				b.WriteByte('\n')
			}
		} else {
			b.WriteString(argText)
		}
		b.WriteByte('\n')
	}
	results := n.ToolResults()
	if n.Role == transcript.RoleTool && n.ToolCallID != "" && len(results) > 0 {
		results = results[1:] // the node's text, written above
	}
	for _, r := range results {
		b.WriteString(r.Text)
		b.WriteByte('\n')
	}
}

// Matcher answers whether a fact survives in a text. Whitespace is
// collapsed on both sides, so a summary that rewraps a line still keeps it.
type Matcher struct {
	text string
}

// NewMatcher prepares text (what the model reads).
func NewMatcher(text string) *Matcher {
	return &Matcher{text: space.ReplaceAllString(text, " ")}
}

// Has reports whether f is in the text: a change by its path and every
// symbol (hasChange); any other verbatim, or — for a path of three
// or more components — its last two components (a summary may name
// /home/u/proj/lib/a/b.ex as lib/a/b.ex, never just b.ex).
func (m *Matcher) Has(f Fact) bool {
	if f.Kind == KindChange {
		return m.hasChange(f)
	}
	if strings.Contains(m.text, f.Text) {
		return true
	}
	if f.Kind == KindPath {
		parts := strings.Split(strings.Trim(f.Text, "/"), "/")
		if len(parts) >= 3 {
			return strings.Contains(m.text, strings.Join(parts[len(parts)-2:], "/"))
		}
	}
	return false
}
