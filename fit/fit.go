// Package fit builds a request body that fits a model's window by
// estimate's count (exact for models whose tokenizer is public, a stated
// proxy otherwise: Report.EncodingIsProxy) from a rendered view, without touching the DAG (docs/FIT.md,
// "Compaction inside one user message" and "Request-local checkpoints").
// It owns the three request-local steps — summarize completed tool
// results, replace older complete history with a checkpoint, snip — and the
// limits on the summary calls they make. It decides only what one outgoing
// request carries; every token figure comes from the estimate package, and
// it never writes a session (its summary cache lives beside the session
// files and is never needed for correctness).
package fit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/summarize"
	"github.com/ctxfold/ctxfold/transcript"
)

// Defaults for the summary calls of one preparation (docs/FIT.md: at most 32
// requests and a 60-second deadline).
const (
	DefaultMaxCalls        = 32
	DefaultDeadline        = 60 * time.Second
	DefaultSummaryTokens   = 400
	DefaultChunkTokens     = 8000
	minChunkTokens         = 256
	ToolSummaryPrefix      = "[ctxfold: tool output summarized for this request]\n"
	CheckpointPrefix       = "[Request-local checkpoint: earlier work in this conversation, summarized]\n"
	CheckpointIDPrefix     = "checkpoint_"
	cacheDirName           = "cache/fit"
	summaryOverheadPadding = 8
	// DefaultMargin asks for the default safety margin: 1% of the window,
	// at least 256 tokens. Any other negative margin is invalid.
	DefaultMargin = -1
)

// Steps, in the order they are tried.
const (
	StepToolResults = "summarize_tool_results"
	StepCheckpoint  = "checkpoint"
	StepSnip        = "snip"
)

// Options tune one fit.
type Options struct {
	Estimate estimate.Options
	// Margin is a safety margin kept free besides the output reserve;
	// DefaultMargin (or any negative value) means 1% of the window, at
	// least 256 tokens.
	Margin int
	// Summarizer writes tool-result summaries and checkpoints; nil skips
	// steps 1 and 2 (only snipping is possible).
	Summarizer summarize.Summarizer
	// SummaryTokens is the output budget of one summary; ChunkTokens the
	// input budget of one summary call (longer text goes in chunks).
	SummaryTokens int
	ChunkTokens   int
	// MaxCalls and Deadline bound the summary calls of this preparation:
	// MaxCalls counts provider calls (a summarize.Limiter such as
	// summarize.OpenAI counts each HTTP attempt, retries included; any other
	// summarizer counts one per Summarize), and Deadline starts at the
	// first summary call, so the time spent measuring is not taken from it.
	MaxCalls int
	Deadline time.Duration
	// Session names the session in the report.
	Session string
	// CacheDir holds cached summaries ("" disables the cache).
	CacheDir string
}

// Transformation is one change made to the outgoing request.
type Transformation struct {
	Step         string   `json:"step"`
	NodeIDs      []string `json:"node_ids"`
	NewID        string   `json:"new_id,omitempty"`
	TokensBefore int      `json:"tokens_before"`
	TokensAfter  int      `json:"tokens_after"`
}

// Report says what a fit did.
// Budget figures carry estimate's names: InputBudget here is the window
// minus the output reserve minus the margin.
type Report struct {
	Session  string `json:"session"`
	Model    string `json:"model"`
	Encoding string `json:"encoding"`
	// EncodingIsProxy: the model's own tokenizer is not public (Claude,
	// Gemini) and the fit is by a proxy's count; the margin must absorb the
	// proxy's error (docs/ACCURACY.md).
	EncodingIsProxy bool `json:"encoding_is_proxy"`
	Window          int  `json:"window"`
	OutputReserve   int  `json:"output_reserve"`
	Margin          int  `json:"margin"`
	InputBudget     int  `json:"input_budget"`
	// Calibration, when the session recorded usage, is the correction the
	// budget was converted with: InputBudget is then what the view's own
	// count may reach (estimate.Correction.RawBudget).
	Calibration     *estimate.Correction `json:"calibration,omitempty"`
	TokensBefore    int                  `json:"tokens_before"`
	TokensAfter     int                  `json:"tokens_after"`
	Fitted          bool                 `json:"fitted"`
	SummaryCalls    int                  `json:"summary_calls"`
	CacheHits       int                  `json:"cache_hits"`
	SummaryFailures []string             `json:"summary_failures"`
	Transformations []Transformation     `json:"transformations"`
}

// DoesNotFitError: even after every step the request is over budget,
// because what may not be touched is too large. Exit code 5.
type DoesNotFitError struct {
	Tokens, Budget, Protected int
}

func (e *DoesNotFitError) Error() string {
	return fmt.Sprintf("request does not fit: %d tokens after fitting, budget %d (over by %d); protected content alone (system, user messages, the latest assistant segment, incomplete tool groups, multimodal and signed content) is %d tokens",
		e.Tokens, e.Budget, e.Tokens-e.Budget, e.Protected)
}

// Hint suggests what can be changed.
func (e *DoesNotFitError) Hint() string {
	return "compact the session ('ctxfold compact'), lower --output-cap or --margin, or use a model with a larger window"
}

// OutputCapError: an explicit --output-cap cannot be honoured; it is never
// silently reduced. It is a usage error (cmd/exit.go).
type OutputCapError struct {
	Cap, Limit int
	What       string
}

func (e *OutputCapError) Error() string {
	return fmt.Sprintf("--output-cap %d cannot be honoured: %s is %d", e.Cap, e.What, e.Limit)
}

// NoBudgetError: the window leaves no input budget once the output reserve
// and the margin are taken (a tiny --window), so no request can fit.
// Fit returns it before any estimate, summary call or snip. It is a usage
// error (cmd/exit.go).
type NoBudgetError struct {
	Window, OutputReserve, Margin int
	// InputBudget is the result (≤ 0).
	InputBudget int
}

func (e *NoBudgetError) Error() string {
	return fmt.Sprintf("no input budget: window %d − output reserve %d − margin %d = %d tokens",
		e.Window, e.OutputReserve, e.Margin, e.InputBudget)
}

// Hint suggests what can be changed.
func (e *NoBudgetError) Hint() string {
	return "give a larger --window (or a model with one), or lower --output-cap or --margin"
}

// fitter is the state of one preparation.
type fitter struct {
	opts   Options
	nodes  []*transcript.Node
	tokens []int
	extras int
	total  int
	budget int
	rep    *Report
	// summary-call budget: sumCtx carries the deadline, started by the
	// first call (startDeadline).
	parent context.Context
	sumCtx context.Context
	cancel context.CancelFunc
	calls  int
	stop   string
}

func (f *fitter) startDeadline() {
	if f.sumCtx == nil {
		f.sumCtx, f.cancel = context.WithTimeout(f.parent, f.opts.Deadline)
	}
}

// Fit returns the nodes of a request that fits, and a report. nodes is the
// rendered view (render.View.LoadNodes); it is not modified. When the view
// already fits, the same nodes are returned unchanged.
func Fit(ctx context.Context, nodes []*transcript.Node, opts Options) ([]*transcript.Node, *Report, error) {
	b, err := estimate.Budget(opts.Estimate)
	if err != nil {
		return nil, nil, err
	}
	if explicit := opts.Estimate.OutputCap; explicit > 0 {
		if b.MaxOutput > 0 && explicit > b.MaxOutput {
			return nil, nil, &OutputCapError{Cap: explicit, Limit: b.MaxOutput, What: "the model's output capability"}
		}
		if explicit >= b.Window {
			return nil, nil, &OutputCapError{Cap: explicit, Limit: b.Window, What: "the context window"}
		}
	}
	margin := opts.Margin
	if margin < 0 {
		margin = max(256, b.Window/100)
	}
	if b.InputBudget-margin <= 0 {
		// A negative budget would make every step look necessary and still
		// fail: refuse before any summary call or snip.
		return nil, nil, &NoBudgetError{Window: b.Window, OutputReserve: b.OutputReserve, Margin: margin, InputBudget: b.InputBudget - margin}
	}
	rep := &Report{Session: opts.Session, Model: b.Model, Encoding: b.Encoding, EncodingIsProxy: b.EncodingIsProxy, Window: b.Window, OutputReserve: b.OutputReserve,
		Margin: margin, InputBudget: b.InputBudget - margin, SummaryFailures: []string{}, Transformations: []Transformation{}}
	if c := opts.Estimate.Correction; c != nil && !opts.Estimate.NoCalibrate {
		// The provider counts the view's own tokens × slope plus the
		// unrecorded prefix: the view's count must fit what is left.
		rep.Calibration = c
		rep.InputBudget = c.RawBudget(rep.InputBudget)
	}
	est := opts.Estimate
	est.NodeDetail = true
	res, err := estimate.Nodes(ctx, nodes, est)
	if err != nil {
		return nil, nil, err
	}
	rep.TokensBefore, rep.TokensAfter = res.Total, res.Total
	if rep.InputBudget <= 0 {
		// The unrecorded prefix alone fills the budget: nothing to fold.
		return nil, rep, &DoesNotFitError{Tokens: res.Total, Budget: rep.InputBudget}
	}
	if res.Total <= rep.InputBudget {
		rep.Fitted = true
		return nodes, rep, nil
	}
	if opts.MaxCalls <= 0 {
		opts.MaxCalls = DefaultMaxCalls
	}
	if opts.Deadline <= 0 {
		opts.Deadline = DefaultDeadline
	}
	if opts.SummaryTokens <= 0 {
		opts.SummaryTokens = DefaultSummaryTokens
	}
	if opts.ChunkTokens <= 0 {
		opts.ChunkTokens = DefaultChunkTokens
	}
	f := &fitter{opts: opts, nodes: append([]*transcript.Node(nil), nodes...), budget: rep.InputBudget, rep: rep, parent: ctx}
	f.tokens = make([]int, len(nodes))
	sum := 0
	for k, nc := range res.Nodes {
		f.tokens[k] = nc.Tokens
		sum += nc.Tokens
	}
	f.extras, f.total = res.Total-sum, res.Total
	defer func() {
		if f.cancel != nil {
			f.cancel()
		}
	}()

	for _, step := range []func(context.Context) error{f.summarizeToolResults, f.checkpoint, f.snip} {
		if f.total <= f.budget {
			break
		}
		if err := step(ctx); err != nil {
			return nil, nil, err
		}
	}
	// The incremental total is re-checked with one exact count of the
	// whole request: the body that leaves must be within budget.
	final, err := estimate.Nodes(ctx, f.nodes, opts.Estimate)
	if err != nil {
		return nil, nil, err
	}
	rep.TokensAfter = final.Total
	if final.Total > rep.InputBudget {
		return nil, rep, &DoesNotFitError{Tokens: final.Total, Budget: rep.InputBudget, Protected: f.protectedTokens()}
	}
	rep.Fitted = true
	return f.nodes, rep, nil
}

// recount sets node k's tokens after a change and keeps the total.
func (f *fitter) recount(ctx context.Context, k int) error {
	res, err := estimate.Nodes(ctx, []*transcript.Node{f.nodes[k]}, f.detail())
	if err != nil {
		return err
	}
	f.total += res.Nodes[0].Tokens - f.tokens[k]
	f.tokens[k] = res.Nodes[0].Tokens
	return nil
}

func (f *fitter) detail() estimate.Options {
	o := f.opts.Estimate
	o.NodeDetail = true
	return o
}

// ---- structure of the request ----

// groups are the view's tool groups (transcript.ToolGroups): a node that
// calls tools plus the nodes after it that carry its results.
func groups(nodes []*transcript.Node) []transcript.ToolGroup { return transcript.ToolGroups(nodes) }

func hasImage(n *transcript.Node) bool {
	if !n.Content.IsBlocks {
		return false
	}
	for _, b := range n.Content.Blocks {
		if b.Type == transcript.BlockImage {
			return true
		}
	}
	return false
}

func hasSignedThinking(n *transcript.Node) bool {
	if !n.Content.IsBlocks {
		return false
	}
	for _, b := range n.Content.Blocks {
		if b.Type == transcript.BlockThinking && b.Signature != "" {
			return true
		}
	}
	return false
}

// lastUserTurn is the index of the last turn start (Node.IsTurnStart):
// what follows it is the latest assistant segment.
func lastUserTurn(nodes []*transcript.Node) int {
	for k := len(nodes) - 1; k >= 0; k-- {
		if nodes[k].IsTurnStart() {
			return k
		}
	}
	return -1
}

// protected marks what no step may remove or rewrite (docs/FIT.md): system
// and user messages, the latest assistant segment, incomplete tool groups,
// multimodal and signed content.
func protected(nodes []*transcript.Node) []bool {
	p := make([]bool, len(nodes))
	last := lastUserTurn(nodes)
	for k, n := range nodes {
		switch {
		case n.Role == transcript.RoleSystem, n.Role == transcript.RoleUser && !n.CarriesOnlyResults():
			p[k] = true
		case k > last:
			p[k] = true
		case hasImage(n), hasSignedThinking(n):
			p[k] = true
		}
	}
	for _, g := range groups(nodes) {
		if g.Complete {
			continue
		}
		p[g.Call] = true
		for _, r := range g.Results {
			p[r] = true
		}
	}
	return p
}

// protectedTokens is what no step can remove: everything outside the
// eligible units, plus the view's fixed extras.
func (f *fitter) protectedTokens() int {
	removable := make([]bool, len(f.nodes))
	for _, u := range eligibleUnits(f.nodes) {
		for k := u.first; k <= u.last; k++ {
			removable[k] = true
		}
	}
	sum := f.extras
	for k := range f.nodes {
		if !removable[k] {
			sum += f.tokens[k]
		}
	}
	return sum
}

// unit is a run of nodes that is removed or summarized whole: a complete
// tool group never loses its call or one of its results.
type unit struct{ first, last int }

// eligibleUnits lists, oldest first, what steps 2 and 3 may fold away:
// assistant text and complete tool groups before the latest user turn that
// carry no multimodal or signed content.
func eligibleUnits(nodes []*transcript.Node) []unit {
	p := protected(nodes)
	inGroup := make([]int, len(nodes))
	for k := range inGroup {
		inGroup[k] = -1
	}
	gs := groups(nodes)
	for gi, g := range gs {
		inGroup[g.Call] = gi
		for _, r := range g.Results {
			inGroup[r] = gi
		}
	}
	var out []unit
	for k := 0; k < len(nodes); k++ {
		if gi := inGroup[k]; gi >= 0 {
			g := gs[gi]
			last := g.Call
			if len(g.Results) > 0 {
				last = g.Results[len(g.Results)-1]
			}
			ok := g.Complete
			for j := g.Call; j <= last; j++ {
				if p[j] {
					ok = false
				}
			}
			if ok {
				out = append(out, unit{g.Call, last})
			}
			k = last
			continue
		}
		if !p[k] && nodes[k].Role == transcript.RoleAssistant {
			out = append(out, unit{k, k})
		}
	}
	return out
}

// ---- step 1: summarize text-only results of completed tool groups ----

func (f *fitter) summarizeToolResults(ctx context.Context) error {
	if f.opts.Summarizer == nil {
		return nil
	}
	for _, g := range groups(f.nodes) {
		if !g.Complete {
			continue
		}
		for _, k := range g.Results {
			if f.total <= f.budget {
				return nil
			}
			n := f.nodes[k]
			if hasImage(n) || f.tokens[k] <= f.opts.SummaryTokens+summaryOverheadPadding {
				continue
			}
			if err := f.summarizeResult(ctx, g.Call, k); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *fitter) summarizeResult(ctx context.Context, call, k int) error {
	orig := f.nodes[k]
	repl := cloneNode(orig)
	changed := false
	summarize := func(text, callID string) (string, bool) {
		ctxNode := callContext(f.nodes[call], callID)
		result := &transcript.Node{ID: orig.ID, Role: transcript.RoleTool, ToolCallID: callID, Content: transcript.TextContent(text)}
		s, ok := f.summary("tool_result", []*transcript.Node{ctxNode, result})
		if !ok {
			return "", false
		}
		return ToolSummaryPrefix + s, true
	}
	if orig.Role == transcript.RoleTool {
		if s, ok := summarize(orig.Content.PlainText(), orig.ToolCallID); ok {
			repl.Content = transcript.TextContent(s)
			changed = true
		}
	} else {
		for bi, b := range repl.Content.Blocks {
			if b.Type != transcript.BlockToolResult || b.Text == "" {
				continue
			}
			if s, ok := summarize(b.Text, b.ToolCallID); ok {
				repl.Content.Blocks[bi].Text = s
				changed = true
			}
		}
	}
	if !changed {
		return nil
	}
	before := f.tokens[k]
	f.nodes[k] = repl
	if err := f.recount(ctx, k); err != nil {
		return err
	}
	if f.tokens[k] >= before {
		// A summary that does not shrink the result is not used.
		f.total += before - f.tokens[k]
		f.tokens[k] = before
		f.nodes[k] = orig
		return nil
	}
	f.rep.Transformations = append(f.rep.Transformations, Transformation{Step: StepToolResults, NodeIDs: []string{orig.ID}, TokensBefore: before, TokensAfter: f.tokens[k]})
	return nil
}

// callContext is the assistant node reduced to the one call a result
// answers, so the summarizer knows what produced the output.
func callContext(assistant *transcript.Node, callID string) *transcript.Node {
	n := &transcript.Node{ID: assistant.ID, Role: transcript.RoleAssistant}
	for _, c := range assistant.AllToolCalls() {
		if c.ID == callID {
			n.ToolCalls = []transcript.ToolCall{c}
		}
	}
	return n
}

func cloneNode(n *transcript.Node) *transcript.Node {
	c := *n
	if n.Content.IsBlocks {
		c.Content.Blocks = append([]transcript.Block(nil), n.Content.Blocks...)
	}
	return &c
}

// ---- step 2: a request-local checkpoint ----

func (f *fitter) checkpoint(ctx context.Context) error {
	if f.opts.Summarizer == nil {
		return nil
	}
	units := eligibleUnits(f.nodes)
	if len(units) == 0 {
		return nil
	}
	// The smallest prefix of eligible history whose replacement by a
	// checkpoint of at most SummaryTokens brings the request within budget.
	need := f.total - f.budget + f.opts.SummaryTokens + summaryOverheadPadding
	saved, take := 0, len(units)
	for i, u := range units {
		for k := u.first; k <= u.last; k++ {
			saved += f.tokens[k]
		}
		if saved >= need {
			take = i + 1
			break
		}
	}
	chosen := units[:take]
	var covered []*transcript.Node
	var ids []string
	before := 0
	drop := map[int]bool{}
	for _, u := range chosen {
		for k := u.first; k <= u.last; k++ {
			covered = append(covered, f.nodes[k])
			ids = append(ids, f.nodes[k].ID)
			before += f.tokens[k]
			drop[k] = true
		}
	}
	text, ok := f.summary("checkpoint", covered)
	if !ok {
		return nil
	}
	sum := sha256.Sum256([]byte(strings.Join(ids, "\x00")))
	cp := &transcript.Node{ID: CheckpointIDPrefix + hex.EncodeToString(sum[:6]), Role: transcript.RoleAssistant,
		Content: transcript.TextContent(CheckpointPrefix + text)}
	// The checkpoint stands where the folded history ended, after the user
	// messages it interleaved with, which stay verbatim and in order.
	at := chosen[len(chosen)-1].last
	var nodes []*transcript.Node
	var tokens []int
	for k, n := range f.nodes {
		if !drop[k] {
			nodes, tokens = append(nodes, n), append(tokens, f.tokens[k])
		}
		if k == at {
			nodes, tokens = append(nodes, cp), append(tokens, 0)
		}
	}
	cpIndex := 0
	for k, n := range nodes {
		if n == cp {
			cpIndex = k
		}
	}
	oldNodes, oldTokens, oldTotal := f.nodes, f.tokens, f.total
	f.nodes, f.tokens = nodes, tokens
	f.total -= before
	if err := f.recount(ctx, cpIndex); err != nil {
		return err
	}
	if f.total >= oldTotal {
		f.nodes, f.tokens, f.total = oldNodes, oldTokens, oldTotal
		return nil
	}
	f.rep.Transformations = append(f.rep.Transformations, Transformation{Step: StepCheckpoint, NodeIDs: ids, NewID: cp.ID, TokensBefore: before, TokensAfter: f.tokens[cpIndex]})
	return nil
}

// ---- step 3: snip ----

// snip drops the oldest eligible units until the request fits. Dropping a
// whole unit changes neither what is protected nor the other units (a
// complete tool group leaves as one), so the units are computed once and
// the nodes compacted once.
func (f *fitter) snip(ctx context.Context) error {
	drop := make([]bool, len(f.nodes))
	dropped := false
	for _, u := range eligibleUnits(f.nodes) {
		if f.total <= f.budget {
			break
		}
		var ids []string
		before := 0
		for k := u.first; k <= u.last; k++ {
			ids = append(ids, f.nodes[k].ID)
			before += f.tokens[k]
			drop[k] = true
		}
		dropped = true
		f.total -= before
		f.rep.Transformations = append(f.rep.Transformations, Transformation{Step: StepSnip, NodeIDs: ids, TokensBefore: before, TokensAfter: 0})
	}
	if !dropped {
		return nil
	}
	nodes, tokens := f.nodes[:0:0], f.tokens[:0:0]
	for k, n := range f.nodes {
		if !drop[k] {
			nodes, tokens = append(nodes, n), append(tokens, f.tokens[k])
		}
	}
	f.nodes, f.tokens = nodes, tokens
	return nil
}

// ---- summary calls: budget, chunks, cache ----

// summary summarizes nodes within the preparation's call budget and
// deadline, in chunks of at most ChunkTokens. ok is false when no summary
// could be had; the step then leaves the content as it is.
func (f *fitter) summary(kind string, nodes []*transcript.Node) (string, bool) {
	key := f.cacheKey(kind, nodes)
	if s, ok := f.cacheGet(key); ok {
		f.rep.CacheHits++
		return s, true
	}
	chunk := f.opts.ChunkTokens
	for {
		parts, err := f.chunks(nodes, chunk)
		if err != nil {
			f.fail(err)
			return "", false
		}
		var out []string
		overflow := false
		for _, part := range parts {
			s, err := f.call(part)
			if errors.Is(err, summarize.ErrContextLength) && chunk/2 >= minChunkTokens {
				overflow = true
				break
			}
			if err != nil {
				f.fail(err)
				return "", false
			}
			// One chunk of a long output may hold nothing worth keeping
			// (an extractive summary of it is empty); the others still
			// summarize the whole.
			if s != "" {
				out = append(out, s)
			}
		}
		if overflow {
			chunk /= 2
			continue
		}
		if len(out) == 0 {
			f.fail(errors.New("empty summary"))
			return "", false
		}
		s := strings.Join(out, "\n")
		f.cachePut(key, s)
		return s, true
	}
}

// call makes one summary call, or refuses once the call budget or the
// deadline is spent.
func (f *fitter) call(nodes []*transcript.Node) (string, error) {
	if f.stop != "" {
		return "", errors.New(f.stop)
	}
	if f.calls >= f.opts.MaxCalls {
		f.stop = fmt.Sprintf("summary call budget spent (%d calls)", f.opts.MaxCalls)
		return "", errors.New(f.stop)
	}
	if f.sumCtx == nil {
		// The first call always starts: the deadline begins with it.
		f.startDeadline()
	} else if f.sumCtx.Err() != nil {
		f.stop = fmt.Sprintf("summary deadline passed (%s)", f.opts.Deadline)
		return "", errors.New(f.stop)
	}
	summarizer := f.opts.Summarizer
	used := func() int { return 1 }
	if l, ok := summarizer.(summarize.Limiter); ok {
		// It retries and chunks on its own: hand it only what is left of
		// this preparation's calls and time.
		deadline, _ := f.sumCtx.Deadline()
		summarizer, used = l.Limited(f.opts.MaxCalls-f.calls, deadline)
	}
	// Tool output goes unclipped: chunks sized it, and the summary is of
	// the whole result.
	s, err := summarizer.Summarize(f.sumCtx, summarize.Request{Nodes: nodes, MaxTokens: f.opts.SummaryTokens, Encoding: f.encoding(), FullResults: true})
	// A call that made no provider call still counts, so a broken
	// summarizer cannot loop.
	f.calls += max(used(), 1)
	f.calls = min(f.calls, f.opts.MaxCalls)
	f.rep.SummaryCalls = f.calls
	if err != nil && f.sumCtx.Err() != nil {
		f.stop = fmt.Sprintf("summary deadline passed (%s)", f.opts.Deadline)
		return "", errors.New(f.stop)
	}
	return strings.TrimSpace(s), err
}

func (f *fitter) fail(err error) {
	msg := err.Error()
	for _, m := range f.rep.SummaryFailures {
		if m == msg {
			return
		}
	}
	f.rep.SummaryFailures = append(f.rep.SummaryFailures, msg)
}

// chunks splits nodes into summary calls of at most chunk tokens each; a
// single node longer than that is split by lines (whole text blocks).
func (f *fitter) chunks(nodes []*transcript.Node, chunk int) ([][]*transcript.Node, error) {
	enc := f.encoding()
	var out [][]*transcript.Node
	var cur []*transcript.Node
	size := 0
	flush := func() {
		if len(cur) > 0 {
			out = append(out, cur)
			cur, size = nil, 0
		}
	}
	for _, n := range nodes {
		t, err := estimate.Text(enc, summarize.TranscriptFull([]*transcript.Node{n}))
		if err != nil {
			return nil, err
		}
		if t <= chunk {
			if size+t > chunk {
				flush()
			}
			cur, size = append(cur, n), size+t
			continue
		}
		flush()
		pieces, err := splitText(enc, n.Content.PlainText(), chunk)
		if err != nil {
			return nil, err
		}
		for _, p := range pieces {
			c := *n
			c.Content = transcript.TextContent(p)
			c.Content.IsBlocks = false
			out = append(out, []*transcript.Node{&c})
		}
	}
	flush()
	return out, nil
}

// splitText cuts text at line boundaries into pieces of at most limit
// tokens (a single longer line is cut by bytes).
func splitText(enc, text string, limit int) ([]string, error) {
	lines := strings.SplitAfter(text, "\n")
	var out []string
	var b strings.Builder
	size := 0
	for _, ln := range lines {
		t, err := estimate.Text(enc, ln)
		if err != nil {
			return nil, err
		}
		for t > limit {
			// An overlong line: cut it proportionally, on a rune boundary.
			cut := len(ln) * limit / t
			for cut > 0 && cut < len(ln) && ln[cut]&0xC0 == 0x80 {
				cut--
			}
			if cut <= 0 {
				cut = len(ln)
			}
			if b.Len() > 0 {
				out = append(out, b.String())
				b.Reset()
				size = 0
			}
			out = append(out, ln[:cut])
			ln = ln[cut:]
			if t, err = estimate.Text(enc, ln); err != nil {
				return nil, err
			}
		}
		if size+t > limit && b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
			size = 0
		}
		b.WriteString(ln)
		size += t
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out, nil
}

func (f *fitter) encoding() string {
	if f.opts.Estimate.Encoding != "" {
		return f.opts.Estimate.Encoding
	}
	if b, err := estimate.Budget(f.opts.Estimate); err == nil {
		return b.Encoding
	}
	return estimate.O200kBase
}

func (f *fitter) cacheKey(kind string, nodes []*transcript.Node) string {
	h := sha256.New()
	fmt.Fprintf(h, "ctxfold-fit-v2\x00%s\x00%s\x00%s\x00%d\x00%d\x00%s\x00", kind, f.opts.Summarizer.Name(), f.opts.Summarizer.CacheKey(),
		f.opts.SummaryTokens, f.opts.ChunkTokens, f.encoding())
	h.Write([]byte(summarize.TranscriptFull(nodes)))
	return hex.EncodeToString(h.Sum(nil))
}

func (f *fitter) cacheGet(key string) (string, bool) {
	if f.opts.CacheDir == "" {
		return "", false
	}
	data, err := os.ReadFile(filepath.Join(f.opts.CacheDir, cacheDirName, key+".txt"))
	if err != nil || len(data) == 0 {
		return "", false
	}
	return string(data), true
}

// cachePut writes atomically (temp + rename) so concurrent fits never read
// a partial entry; any failure just leaves the cache cold.
func (f *fitter) cachePut(key, s string) {
	if f.opts.CacheDir == "" || s == "" {
		return
	}
	dir := filepath.Join(f.opts.CacheDir, cacheDirName)
	if os.MkdirAll(dir, 0o755) != nil {
		return
	}
	_ = transcript.WriteBytesAtomic(filepath.Join(dir, key+".txt"), transcript.AtomicOptions{}, []byte(s))
}
