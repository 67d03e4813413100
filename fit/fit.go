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
	"fmt"
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
	// Session names the session in the report; File the transcript file
	// it is the cache session of, if any.
	Session string
	File    string
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
	File     string `json:"file,omitempty"`
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
	// Fixed is what the calibration adds to every request that the view
	// does not hold (the client's unrecorded prompt prefix, framing): a
	// window below it leaves nothing either, and is the same error, not
	// a request that "does not fit" (issue 44).
	Fixed int
	// InputBudget is the result (≤ 0).
	InputBudget int
}

func (e *NoBudgetError) Error() string {
	if e.Fixed != 0 {
		return fmt.Sprintf("no input budget: window %d − output reserve %d − margin %d − fixed costs %d (the client's prompt prefix and framing, from recorded usage) = %d tokens",
			e.Window, e.OutputReserve, e.Margin, e.Fixed, e.InputBudget)
	}
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
	rep, err := newReport(opts)
	if err != nil {
		return nil, nil, err
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
	f := newFitter(ctx, nodes, res, withDefaults(opts), rep)
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

// newReport checks the budget options and returns the report with the
// input budget every step must meet. It refuses before any count so that
// an impossible budget costs no tokenizer work or summary call.
func newReport(opts Options) (*Report, error) {
	b, err := estimate.Budget(opts.Estimate)
	if err != nil {
		return nil, err
	}
	if explicit := opts.Estimate.OutputCap; explicit > 0 {
		if b.MaxOutput > 0 && explicit > b.MaxOutput {
			return nil, &OutputCapError{Cap: explicit, Limit: b.MaxOutput, What: "the model's output capability"}
		}
		if explicit >= b.Window {
			return nil, &OutputCapError{Cap: explicit, Limit: b.Window, What: "the context window"}
		}
	}
	margin := opts.Margin
	if margin < 0 {
		margin = max(256, b.Window/100)
	}
	if b.InputBudget-margin <= 0 {
		// A negative budget would make every step look necessary and still
		// fail: refuse before any summary call or snip.
		return nil, &NoBudgetError{Window: b.Window, OutputReserve: b.OutputReserve, Margin: margin, InputBudget: b.InputBudget - margin}
	}
	rep := &Report{File: opts.File, Session: opts.Session, Model: b.Model, Encoding: b.Encoding, EncodingIsProxy: b.EncodingIsProxy, Window: b.Window, OutputReserve: b.OutputReserve,
		Margin: margin, InputBudget: b.InputBudget - margin, SummaryFailures: []string{}, Transformations: []Transformation{}}
	if c := opts.Estimate.Correction; c != nil && !opts.Estimate.NoCalibrate {
		// The provider counts the view's own tokens × slope plus the
		// unrecorded prefix: the view's count must fit what is left.
		rep.Calibration = c
		if fixed := c.UnrecordedTokens + c.CarriedTokens + c.FramingTokens; rep.InputBudget-fixed <= 0 {
			return nil, &NoBudgetError{Window: b.Window, OutputReserve: b.OutputReserve, Margin: margin, Fixed: fixed, InputBudget: rep.InputBudget - fixed}
		}
		rep.InputBudget = c.RawBudget(rep.InputBudget)
	}
	return rep, nil
}

// withDefaults fills the summary-call limits left at zero, so that a
// caller that only wants a fit gets the bounded budget of docs/FIT.md.
func withDefaults(opts Options) Options {
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
	return opts
}

// newFitter starts a preparation from the view's per-node count; the
// tokens not attributed to any node (the request's framing) stay in
// extras so that the incremental total matches the whole-request count.
func newFitter(ctx context.Context, nodes []*transcript.Node, res *estimate.Result, opts Options, rep *Report) *fitter {
	f := &fitter{opts: opts, nodes: append([]*transcript.Node(nil), nodes...), budget: rep.InputBudget, rep: rep, parent: ctx}
	f.tokens = make([]int, len(nodes))
	sum := 0
	for k, nc := range res.Nodes {
		f.tokens[k] = nc.Tokens
		sum += nc.Tokens
	}
	f.extras, f.total = res.Total-sum, res.Total
	return f
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
