package compact

import (
	"strings"

	"github.com/ctxfold/ctxfold/transcript"
)

// Retained-token target bounds (docs/COMPACT.md §2): 10% of the model
// window, clamped to [MinTarget, MaxTarget]. --keep-tokens overrides.
const (
	MinTarget = 8_000
	MaxTarget = 40_000
	// MinTailMessages is how many conversational messages the kept tail
	// holds where the history has them.
	MinTailMessages = 4
)

// Target is the retained-token target for a model window.
func Target(window int) int {
	return min(max(window/10, MinTarget), MaxTarget)
}

// PlanInput is what Plan decides on: the rendered view at HEAD (root first,
// the active summary included when it substitutes) and the per-node token
// counts estimate computed for it. Plan itself counts nothing.
type PlanInput struct {
	Nodes []*transcript.Node
	// Tokens[i] is estimate's count for Nodes[i]; Total the view's total.
	Tokens []int
	Total  int
	Target int
	// PreviousCovers is the coverage of the summary in Nodes, as ids
	// (dag.Graph.CoverIDs: a stored summary may keep a span); nil takes
	// the summary's own covers_ids.
	PreviousCovers []string
}

// Plan is the decision: which turns the summary covers and which stay raw.
type Plan struct {
	// NoOp is true when there is nothing to fold; Reason says why.
	NoOp   bool
	Reason string
	// Start and Cut delimit the newly covered nodes: Nodes[Start:Cut]. The
	// kept tail is Nodes[Cut:].
	Start, Cut int
	// Previous is the active summary in the view (nil when none): its text
	// and the turns it covers are folded into the new summary.
	Previous *transcript.Node
	// NewIDs are the ids of the newly covered turns; CoversIDs the new
	// summary's covers_ids (the previous segment extended by NewIDs).
	NewIDs    []string
	CoversIDs []string
	// PreviousCovers is Previous's coverage, as ids.
	PreviousCovers []string
	// Predecessor is the new summary's splice point.
	Predecessor string
	KeptIDs     []string
	// WithinTurn: the history after the start is one turn, and the kept
	// tail starts at one of its steps (an assistant message right after
	// tool results), not at a request (docs/COMPACT.md §2).
	WithinTurn bool
	// CompactedTurns counts the newly covered turns.
	CompactedTurns int
	Target         int
	TokensBefore   int
	// ReplacedTokens is what the summary replaces in the view (previous
	// summary plus newly covered turns); TailTokens what stays raw.
	ReplacedTokens int
	TailTokens     int
}

// Covered returns the newly covered nodes.
func (p *Plan) Covered(in PlanInput) []*transcript.Node { return in.Nodes[p.Start:p.Cut] }

// No-op reasons.
const (
	ReasonBelowTarget = "the rendered history is at or below the retained-token target"
	ReasonNothingNew  = "no older turns to fold"
	ReasonNoBoundary  = "no user message to start a kept tail at"
	// ReasonBelowThreshold: --if-above did not fire (the view fills less
	// of the budget than asked); nothing was planned against it.
	ReasonBelowThreshold = "below_threshold"
)

// MakePlan selects whole turns to fold. The rules (docs/COMPACT.md states
// each once; this is where they are enforced):
//
//   - The prompt prefix (the leading system nodes) is never covered, nor
//     anything before the active summary: coverage starts right after the
//     summary, else right after the prefix, else at the root itself. A session imported from
//     Claude Code, Codex or Gemini starts with the user's first request,
//     which must enter the summary like any covered turn (docs/COMPACT.md
//     §2); the summary then becomes a root (predecessor "").
//   - A history whose rendered total is at or below the target is a no-op.
//   - The kept tail starts at a user message that answers no tool call and
//     does not directly follow another such message, and the cut never separates an assistant tool call from its results: every
//     call made before the cut has its results before the cut.
//   - The tail is the longest one that fits the target. If even the latest
//     turn exceeds the target it stays intact (everything before it is
//     folded; with nothing before it the plan is a no-op).
//   - With a previous summary, a history after it that fits the target is
//     a no-op (ReasonNothingNew): the tail it kept is not folded again.
//   - A history that is one turn after the start — a long agentic turn,
//     with no request to keep a tail from — keeps its tail from one of its
//     steps: an assistant message right after tool results, every earlier
//     call answered before it (stepBoundaries); the same fit rules choose
//     among them. Not when a previous compaction kept that turn whole.
//   - The tail holds at least MinTailMessages conversational messages where
//     the history has them, even past the target — unless the last two turns
//     exceed the target: then the cut stays at the latest user boundary, the
//     earlier turn enters the summary and the latest user turn stays whole.
func MakePlan(in PlanInput) *Plan {
	n := len(in.Nodes)
	p := &Plan{Target: in.Target, TokensBefore: in.Total}
	noop := func(reason string) *Plan {
		p.NoOp, p.Reason, p.Cut = true, reason, p.Start
		return p
	}
	if n == 0 {
		return noop(ReasonNothingNew)
	}
	p.locateStart(in.Nodes)
	if in.Total <= in.Target {
		return noop(ReasonBelowTarget)
	}
	if p.Start >= n {
		return noop(ReasonNothingNew)
	}
	facts := factsOf(in.Nodes)
	suffix, conv := suffixCounts(in.Tokens, facts)
	if p.Previous != nil && suffix[p.Start] <= in.Target {
		// Everything after the previous summary already fits: it is the
		// tail a compaction kept. Folding part of it again is not
		// compaction but churn (a second run with nothing new is a no-op).
		return noop(ReasonNothingNew)
	}
	bounds := boundaries(facts, p.Start)
	if len(bounds) == 0 && (p.Previous == nil || !facts[p.Start].turnStart) {
		// One long agentic turn: no request after the start to keep a
		// tail from, so its steps are the candidate cuts — unless a
		// previous compaction kept this turn whole (the node after its
		// summary starts the turn): folding it now would make a second
		// run with nothing new no no-op.
		bounds = stepBoundaries(facts, p.Start)
	}
	if len(bounds) == 0 {
		if p.Previous != nil {
			return noop(ReasonNothingNew)
		}
		return noop(ReasonNoBoundary)
	}
	p.Cut = p.chooseCut(bounds, suffix, conv, in.Target)
	p.WithinTurn = p.Cut > p.Start && facts[p.Cut].stepStart
	if p.Cut <= p.Start {
		return noop(ReasonNothingNew)
	}
	p.fillCoverage(in, facts, suffix)
	return p
}

// locateStart sets where coverage may begin and the previous summary, if
// any, whose coverage a new summary extends.
func (p *Plan) locateStart(nodes []*transcript.Node) {
	n := len(nodes)
	// The prompt prefix — the system prompt and any system or developer
	// messages before the first turn (Codex records its permissions and
	// skills that way) — is never covered: a summary of instructions the
	// client sends again would only duplicate them.
	for p.Start < n && nodes[p.Start].Role == transcript.RoleSystem {
		p.Start++
	}
	// The previous summary sits where its segment began; coverage resumes
	// right after it. It may be the view's first node: a session compacted
	// by the tool it was imported from covers from the root.
	for i := 0; i < n; i++ {
		if nodes[i].IsSummary() {
			p.Previous = nodes[i]
			p.Start = i + 1
			break
		}
	}
}

// suffixCounts returns, for every index, the tokens and the number of
// conversational messages from that index to the end, so that any
// candidate cut's tail is measured in constant time.
func suffixCounts(tokens []int, facts []nodeFacts) (suffix, conv []int) {
	n := len(facts)
	suffix = make([]int, n+1)
	conv = make([]int, n+1)
	for i := n - 1; i >= 0; i-- {
		suffix[i] = suffix[i+1] + tokenAt(tokens, i)
		conv[i] = conv[i+1]
		if facts[i].conversational {
			conv[i]++
		}
	}
	return suffix, conv
}

// chooseCut picks the earliest turn boundary whose tail fits the target,
// then moves it back when that tail would hold too few conversational
// messages.
func (p *Plan) chooseCut(bounds, suffix, conv []int, target int) int {
	last := bounds[len(bounds)-1]
	cut := -1
	for _, b := range bounds {
		if suffix[b] <= target {
			cut = b
			break
		}
	}
	if cut < 0 {
		// The latest turn alone exceeds the target: it stays intact.
		cut = last
	}
	if conv[cut] < MinTailMessages {
		// After a previous summary, the node right after it is where the
		// tail it kept began: a candidate too, so that a tail kept to hold
		// four conversational messages is not folded again (cut = Start
		// is "nothing new to fold").
		cands := bounds
		if p.Previous != nil {
			cands = append([]int{p.Start}, bounds...)
		}
		lastTwoExceed := len(cands) >= 2 && suffix[cands[len(cands)-2]] > target
		if !lastTwoExceed {
			for k := len(cands) - 1; k >= 0; k-- {
				if b := cands[k]; b < cut && conv[b] >= MinTailMessages {
					cut = b
					break
				}
			}
		}
	}
	return cut
}

// fillCoverage records what the summary at [Start, Cut) replaces and what
// stays verbatim after it.
func (p *Plan) fillCoverage(in PlanInput, facts []nodeFacts, suffix []int) {
	var prevCovers []string
	if p.Previous != nil {
		prevCovers = in.PreviousCovers
		if prevCovers == nil {
			prevCovers = p.Previous.CoversIDs()
		}
		p.PreviousCovers = prevCovers
		p.Predecessor = p.Previous.Predecessor
		p.ReplacedTokens = tokenAt(in.Tokens, p.Start-1)
	} else {
		p.Predecessor = in.Nodes[p.Start].Predecessor
	}
	for i := p.Start; i < p.Cut; i++ {
		nd := in.Nodes[i]
		p.NewIDs = append(p.NewIDs, nd.ID)
		p.ReplacedTokens += tokenAt(in.Tokens, i)
		if i == p.Start || facts[i].turnStart {
			p.CompactedTurns++
		}
	}
	p.CoversIDs = append(append([]string(nil), prevCovers...), p.NewIDs...)
	for i := p.Cut; i < len(in.Nodes); i++ {
		p.KeptIDs = append(p.KeptIDs, in.Nodes[i].ID)
	}
	p.TailTokens = suffix[p.Cut]
}

func tokenAt(tokens []int, i int) int {
	if i < 0 || i >= len(tokens) {
		return 0
	}
	return tokens[i]
}

// nodeFacts is what the plan needs of one node, computed once.
type nodeFacts struct {
	turnStart, conversational bool
	// stepStart: an assistant message right after a node carrying tool
	// results — a new model response within a turn.
	stepStart bool
	// answeredAt is the last position a call this node makes is answered
	// at (-1 when it makes none or none is answered).
	answeredAt int
}

func factsOf(nodes []*transcript.Node) []nodeFacts {
	resultAt := map[string]int{}
	facts := make([]nodeFacts, len(nodes))
	tools := make([]transcript.ToolFacts, len(nodes))
	for i, nd := range nodes {
		tools[i] = nd.ToolFacts()
		for _, r := range tools[i].Results {
			if _, seen := resultAt[r]; !seen {
				resultAt[r] = i
			}
		}
		facts[i] = nodeFacts{
			turnStart:      nd.IsTurnStart(),
			conversational: conversational(nd),
			stepStart:      i > 0 && nd.Role == transcript.RoleAssistant && !nd.IsSummary() && len(tools[i-1].Results) > 0,
			answeredAt:     -1,
		}
	}
	// By the tool-call model (transcript/tools.go) a turn start ends every
	// tool group, so in a session that passes verify no call is open at
	// one. Foreign data may still hold a result after a later turn start
	// (imported as recorded): the position of each call's result, wherever
	// it is, keeps a cut from separating the two.
	for i := range nodes {
		for _, c := range tools[i].Calls {
			if at, ok := resultAt[c]; ok && at > facts[i].answeredAt {
				facts[i].answeredAt = at
			}
		}
	}
	return facts
}

// boundaries returns the positions after start where a kept tail may begin:
// a user turn start, not right after another, with no tool call before it
// still waiting for a result at or after it (docs/FORMAT.md §2, tool-call
// adjacency: a tool call and its results are never split).
func boundaries(facts []nodeFacts, start int) []int {
	var out []int
	pending := -1 // the last position a call made so far is answered at
	for i, f := range facts {
		// A user message right after another one continues its turn
		// (Codex sends its environment context just before the request):
		// a tail starting between them would fold a lone message.
		if i > start && f.turnStart && pending < i && !facts[i-1].turnStart {
			out = append(out, i)
		}
		pending = max(pending, f.answeredAt)
	}
	return out
}

// stepBoundaries returns the positions after start where a kept tail may
// begin inside one long turn: a step start (a new model response right
// after tool results, so a response split over several nodes stays
// whole) with every call made before it answered before it (docs/FORMAT.md
// §2). The request that opened the turn is covered: the summary quotes it
// (its objective or latest request).
func stepBoundaries(facts []nodeFacts, start int) []int {
	var out []int
	pending := -1
	for i, f := range facts {
		if i > start && f.stepStart && pending < i {
			out = append(out, i)
		}
		pending = max(pending, f.answeredAt)
	}
	return out
}

// conversational: a user or assistant message with text of its own (tool
// results, tool-call-only messages, summaries and the system prompt are not).
func conversational(nd *transcript.Node) bool {
	if nd.IsSummary() || (nd.Role != transcript.RoleUser && nd.Role != transcript.RoleAssistant) {
		return false
	}
	return strings.TrimSpace(nd.Content.PlainText()) != ""
}
