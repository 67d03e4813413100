package estimate

import (
	"bytes"
	"cmp"
	"math"
	"sort"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/transcript"
)

// Calibration compares the estimate with what the provider measured.
// Each assistant node on HEAD's spine that recorded usage.input_tokens is
// one matched request: the view it was answering is re-estimated as it was
// sent (docs/ESTIMATE.md, calibration) and compared with the recorded figure.
//
// The calibrated total is a model fitted to those requests
// (docs/ESTIMATE.md, "Calibration"): calibrated = Slope × total +
// UnrecordedTokens + FramingTokens (+ CarriedTokens), exact at the latest
// matched request. The offset is what the provider read that the
// transcript does not hold — a system prompt and tool definitions the
// client never recorded; the slope, fitted on how measured and estimated
// grew from request to request, corrects a proxy tokenizer's rate, and the
// framing rate fitted beside it the chat format's framing that the stated
// rule undercounts (Method).
type Calibration struct {
	// Requests is how many requests matched.
	Requests int `json:"requests"`
	// Method is MethodOffset (slope 1) or MethodOffsetSlope.
	Method string `json:"method"`
	// LatestNode is the assistant node of the latest matched request, with
	// its measured and estimated input; Ratio = Measured / Estimated (for
	// information: calibration no longer scales by it).
	LatestNode string  `json:"latest_node"`
	Measured   int64   `json:"measured"`
	Estimated  int     `json:"estimated"`
	Ratio      float64 `json:"ratio"`
	// UnrecordedTokens is the inferred part of the prompt the transcript
	// does not hold: Measured − Slope × Estimated (less the hidden output
	// it carried). Negative when the estimate counts more than the provider
	// did. After a compaction it is the prefix alone (Anchor).
	UnrecordedTokens int `json:"unrecorded_tokens"`
	// Anchor is AnchorLatest (the latest request's recorded input, plus
	// what follows it) or AnchorCompaction (the client's prefix, plus the
	// summary and the kept tail: a compaction came after the latest
	// request), or, before any request is recorded, MethodPrior (the
	// client's prior) or MethodProject (the project's earlier session,
	// Result.WithProjectPrefix). CarriedTokens is the hidden output the
	// next request carries (Codex reasoning of the current turn).
	Anchor        string `json:"anchor"`
	CarriedTokens int    `json:"carried_tokens,omitempty"`
	// FramingRate is what the provider counts per token of the view's
	// counted chat-format framing (the overhead category) beyond Slope,
	// fitted with MethodFraming (0 otherwise); FramingTokens is that rate
	// times the framing added since the latest request: the framing of the
	// messages and tool calls after the anchor, which the stated 3-token
	// rule undercounts (docs/ESTIMATE.md, "Calibration").
	FramingRate   float64 `json:"framing_rate,omitempty"`
	FramingTokens int     `json:"framing_tokens,omitempty"`
	// PrefixTokens is the client's own prefix (system prompt, tool
	// definitions): the smallest unrecorded part over the requests, what
	// a view after a compaction is anchored on.
	PrefixTokens int `json:"prefix_tokens"`
	// prefix is PrefixTokens before rounding (Correction.ApplyCompacted).
	prefix    float64
	hasPrefix bool
	// Slope multiplies the view's own tokens (1 with MethodOffset);
	// FittedSlope is the slope fitted on the session's requests, used or
	// not (0 with fewer than two usable steps).
	Slope       float64 `json:"slope"`
	FittedSlope float64 `json:"fitted_slope"`
	// PriorSlope is the slope used where none is fitted (PriorSlope; 0
	// for 1); FirstUnrecordedTokens the first request's unrecorded part
	// (firstUnrecorded; not in the JSON, whose v1 golden is byte for byte).
	PriorSlope float64 `json:"prior_slope,omitempty"`
	// PriorFramingRate is the framing rate used until the session's steps
	// fit one (the function PriorFramingRate; in-process, for Series: the
	// JSON keeps its v1 bytes, and a rate in use is framing_rate).
	PriorFramingRate      float64 `json:"-"`
	FirstUnrecordedTokens int     `json:"-"`
	// CalibratedTotal = Slope × total + UnrecordedTokens: what the
	// provider is predicted to count for this view; CalibratedBudgetPct the
	// same against the input budget.
	CalibratedTotal     int     `json:"calibrated_total"`
	CalibratedBudgetPct float64 `json:"calibrated_budget_pct"`
	// NextMedianError is the median |error| of predicting each matched
	// request from the one before it with Method (0 with one request).
	NextMedianError float64 `json:"next_median_error"`
	// MedianRelError and WorstRelError are the raw estimate's errors over
	// all matched requests, (estimated − measured) / measured; the worst
	// keeps its sign.
	MedianRelError float64 `json:"median_rel_error"`
	WorstRelError  float64 `json:"worst_rel_error"`
	WorstNode      string  `json:"worst_node"`
	// History lists every matched request in spine order (with --nodes).
	History []MatchedRequest `json:"history,omitempty"`
}

// MatchedRequest is one recorded request: the assistant node that
// answered it, the estimate of the view it read, and the measured input.
type MatchedRequest struct {
	Node      string `json:"node"`
	Estimated int    `json:"estimated"`
	Measured  int64  `json:"measured"`
	// Hidden is this request's output the transcript does not show but the
	// next request carries (Codex reasoning, Claude's omitted thinking);
	// NewTurn says a user message lies between the previous request and
	// this one and the provider dropped the earlier turn's hidden output
	// (OpenAI's; Claude keeps it: hiddenKeptAcrossTurns).
	Hidden  int64 `json:"hidden,omitempty"`
	NewTurn bool  `json:"new_turn,omitempty"`
	// Framing is the counted chat-format framing of the view the request
	// read (its overhead category: message and tool-call framing, reply
	// priming, a tool-use preamble), part of Estimated.
	Framing int `json:"framing,omitempty"`
	// Segment is how many summaries were written before the request's
	// node (file order): two requests of different segments read views
	// that a compaction separates, so the step between them is not fitted
	// (FitRequests).
	Segment int `json:"segment,omitempty"`
	// Tokenizer is the tokenizer of the model that answered (tokenizerOf;
	// tokenizerUnknown when not recorded): a request of another tokenizer
	// than the one before it read the same view as another count, so the
	// step between them is not fitted and the prediction across it is
	// rescaled (docs/ESTIMATE.md, "A model switch").
	Tokenizer uint8 `json:"tokenizer,omitempty"`
}

// headState is where HEAD stands relative to the latest matched request
// (docs/ESTIMATE.md, "The anchor").
type headState struct {
	// UserAfterLatest: a user message follows the latest request on the
	// spine, so its turn's hidden output is no longer sent.
	UserAfterLatest bool `json:"user_after_latest,omitempty"`
	// AfterCompaction: the view substitutes a summary written after the
	// latest request, so its recorded input no longer anchors the view.
	AfterCompaction bool `json:"after_compaction,omitempty"`
	// NextSlope, when set, is the prior slope of the tokenizer the next
	// request counts with where it is not the latest request's (a model
	// switch since: tokenizerSlope); the prediction in the latest
	// request's count is rescaled to it. Not kept: it follows from the
	// session's model, which the view carries.
	NextSlope float64 `json:"-"`
}

// Anchors (Calibration.Anchor).
const (
	AnchorLatest     = "latest_request"
	AnchorCompaction = "compaction_prefix"
)

// Calibration methods (Calibration.Method).
const (
	MethodOffset      = "offset"
	MethodOffsetSlope = "offset+slope"
	MethodFraming     = "offset+slope+framing"
)

// Slope bounds: outside them the fit is noise (a proxy tokenizer is not
// off by more than this on any transcript measured in docs/ACCURACY.md).
const (
	minSlope = 0.5
	maxSlope = 3.0
	// slopeGain is how much lower the slope's prediction error must be
	// than the offset's for the slope to be used.
	slopeGain = 0.9
)

// Fit is a calibration model fitted to matched requests in spine order.
type Fit struct {
	Method      string
	Slope       float64
	FittedSlope float64
	// Unrecorded is latest.Measured − Slope × latest.Estimated.
	Unrecorded float64
	// NextMedianError: see Calibration.
	NextMedianError float64
	// Carried is the hidden output the request after the latest carries
	// when it is in the same turn; Prefix is the smallest unrecorded part
	// over the requests — the client's own prefix (system prompt, tools),
	// what a view after a compaction starts from.
	Carried float64
	Prefix  float64
	// FramingRate is the provider's count per counted framing token beyond
	// Slope (MethodFraming); LatestFraming the latest request's framing.
	FramingRate   float64
	LatestFraming int
}

// Predict is the fitted measured input of a view whose estimate is est,
// of which framing is chat-format framing, in the latest request's turn.
func (f Fit) Predict(est, framing int) int {
	total, _, _, _ := f.predictAt(est, framing, headState{})
	return total
}

// predictAt is Predict for HEAD's state: a new turn carries no hidden
// output, a compaction since the latest request anchors on the prefix.
// framed is the fitted framing of what followed the latest request.
func (f Fit) predictAt(est, framing int, h headState) (total int, unrecorded, carried, framed float64) {
	unrecorded, carried = f.Unrecorded, f.Carried
	framed = f.FramingRate * float64(framing-f.LatestFraming)
	if h.UserAfterLatest || h.AfterCompaction {
		carried = 0
	}
	if h.AfterCompaction {
		unrecorded, framed = f.Prefix, 0
	}
	if h.NextSlope > 0 && f.Slope > 0 {
		// A model of another tokenizer reads the whole prompt — the view,
		// the client's prefix, what was carried — at its own rate: the
		// latest tokenizer's count times the ratio of the two rates.
		r := h.NextSlope / f.Slope
		est, unrecorded, carried, framed = int(math.Round(r*float64(est))), r*unrecorded, r*carried, r*framed
	}
	return max(0, int(math.Round(f.Slope*float64(est)+unrecorded+carried+framed))), unrecorded, carried, framed
}

// FitWindow is how many of the latest requests the slope is fitted on
// and judged by (docs/ESTIMATE.md, "Calibration"): the proxy tokenizer's
// rate follows the content of the recent turns, and a bounded window lets
// the status line answer from the tail of a transcript with the number the
// full history gives (tail.go).
const FitWindow = 80

// FitRequests fits the calibration model to reqs (spine order, at least
// one). The offset makes it exact at the last request. Over the last
// FitWindow requests, steps across a compaction left out:
//
//   - with at least minFramingSteps steps, the content slope and the
//     framing rate are fitted together (framingRates: weighted least
//     squares of each step's measured growth on its estimated growth and
//     its framing's growth) and used (MethodFraming);
//   - else the slope is the least-squares fit, through the origin, of each
//     step's measured growth on its estimated growth (Δmeasured ≈
//     s·Δestimated: the offset cancels), bounded to [0.5, 3]. It is used
//     only when, predicting each request of the window from earlier ones
//     with the slope fitted on the steps before it (never on the request
//     predicted), it beats slope 1 by 10% on the summed error of
//     next-request and third-of-the-window-ahead predictions (a window too
//     short for three such predictions judges it on its steps: 10% less of
//     their growth left unexplained).
func FitRequests(reqs []MatchedRequest) Fit { return FitRequestsPrior(reqs, NoPriors) }

// FitRequestsPrior is FitRequests with p's slope where none is fitted (and
// the one a fitted slope must beat) and p's framing rate until the two
// rates are fitted (Priors).
func FitRequestsPrior(reqs []MatchedRequest, p Priors) Fit {
	if len(reqs) == 0 {
		return Fit{Method: MethodOffset, Slope: 1}
	}
	all, carried := WithoutCarried(reqs)
	return fitAdjusted(all, carried, true, p)
}

// fitAdjusted is FitRequests on requests already less their carried
// hidden output (WithoutCarried), at least one. Without prefix, Prefix is
// left at the latest request's unrecorded part instead of the minimum
// over all of them (an O(n) scan a caller fitting every prefix of a long
// history skips when no compaction needs it: Series).
func fitAdjusted(all []MatchedRequest, carried float64, prefix bool, p Priors) Fit {
	prior := p.Slope
	n := len(all)
	f := Fit{Method: MethodOffset, Slope: prior}
	if prior != 1 {
		f.Method = MethodPriorSlope
	}
	f.Carried = carried
	from := sinceSwitch(all)
	win := all[from:]
	slopeBefore, fitted, ok := prequentialSlopes(win, prior)
	if ok {
		f.FittedSlope = fitted
	}
	offErr, slopeErr := replayErrors(win, slopeBefore, f.FittedSlope, prior)
	if f.FittedSlope > 0 && slopeErr < slopeGain*offErr {
		f.Method, f.Slope = MethodOffsetSlope, f.FittedSlope
	}
	ratesBefore, rates := framingRates(win)
	var next []float64
	for k := 1; k < len(win); k++ {
		// The replay judges the session's own fit: without the prior
		// framing rate, NextMedianError reads as it did before it.
		s, c := prior, 0.0
		if rb := ratesBefore[k-1]; rates.ok && rb.ok {
			s, c = rb.slope, rb.framing
		} else if f.Method == MethodOffsetSlope {
			s = slopeBefore[k-1]
		}
		if e, ok := predErr(win, k-1, k, s, c); ok {
			next = append(next, e)
		}
	}
	if rates.ok {
		f.Method, f.Slope, f.FramingRate = MethodFraming, rates.slope, rates.framing
	} else if p.FramingRate > 0 && rates.steps < minFramingSteps {
		f.Method, f.FramingRate = f.Method+MethodPriorFramingSuffix, p.FramingRate
	}
	f.NextMedianError = median(next)
	last := all[n-1]
	f.LatestFraming = last.Framing
	f.Unrecorded = float64(last.Measured) - f.Slope*float64(last.Estimated)
	f.Prefix = f.Unrecorded
	// The client's prefix in the latest tokenizer's count: over the
	// requests since a switch (all of them when there was none).
	for k := n - 1; prefix && k >= 0; k-- {
		f.Prefix = math.Min(f.Prefix, float64(all[k].Measured)-f.Slope*float64(all[k].Estimated))
		if k > 0 && switched(all[k-1].Tokenizer, all[k].Tokenizer) {
			break
		}
	}
	return f
}

// sameView says the step from request a to b is fitted: no compaction
// between them (MatchedRequest.Segment). A switch of tokenizer ends the
// window first (sinceSwitch).
func sameView(reqs []MatchedRequest, a, b int) bool { return reqs[a].Segment == reqs[b].Segment }

// prequentialSlopes returns, for each request k, the slope fitted on the
// steps before it (prior until two steps are known), so that a replay never
// judges the slope on the request it predicts; and the slope fitted on all
// steps, with ok false when fewer than two steps have estimated growth.
func prequentialSlopes(reqs []MatchedRequest, prior float64) (slopeBefore []float64, fitted float64, ok bool) {
	n := len(reqs)
	var sxy, sxx float64
	slopeBefore = make([]float64, n)
	steps := 0
	for k := range n {
		slopeBefore[k] = prior
		if steps >= 2 && sxx > 0 {
			slopeBefore[k] = clampSlope(sxy / sxx)
		}
		if k+1 < n && sameView(reqs, k, k+1) {
			dx := float64(reqs[k+1].Estimated - reqs[k].Estimated)
			dy := float64(reqs[k+1].Measured - reqs[k].Measured)
			if dx != 0 {
				sxy += dx * dy
				sxx += dx * dx
				steps++
			}
		}
	}
	if steps >= 2 && sxx > 0 {
		return slopeBefore, clampSlope(sxy / sxx), true
	}
	return slopeBefore, 0, false
}

// predErr is the relative error of predicting request to from request
// from with slope s and framing rate c; not ok when to has no measured
// usage to compare with or a compaction lies between them.
func predErr(reqs []MatchedRequest, from, to int, s, c float64) (float64, bool) {
	m := float64(reqs[to].Measured)
	if m <= 0 || !sameView(reqs, from, to) {
		return 0, false
	}
	p := float64(reqs[from].Measured) + s*float64(reqs[to].Estimated-reqs[from].Estimated) + c*float64(reqs[to].Framing-reqs[from].Framing)
	return math.Abs(p-m) / m, true
}

// replayErrors sums the errors of offset-only and slope predictions that
// FitRequests compares (see its comment for the two kinds of evidence).
func replayErrors(reqs []MatchedRequest, slopeBefore []float64, fitted, prior float64) (offErr, slopeErr float64) {
	n := len(reqs)
	gap := max(1, n/3)
	add := func(from, to int) {
		// slopeBefore[j] is the slope known when request j was the latest.
		o, ok := predErr(reqs, from, to, prior, 0)
		if !ok {
			return
		}
		e, _ := predErr(reqs, from, to, slopeBefore[from], 0)
		offErr, slopeErr = offErr+o, slopeErr+e
	}
	for k := 1; k < n; k++ {
		add(k-1, k)
		if k >= gap {
			add(k-gap, k)
		}
	}
	// The replay needs a slope fitted before the request it predicts: with
	// fewer than three such predictions (a short window) the evidence is
	// the steps themselves — the slope must leave 10% less of their growth
	// unexplained than slope 1 does.
	informed := 0
	for k := 1; k < n; k++ {
		if slopeBefore[k-1] != prior && sameView(reqs, k-1, k) {
			informed++
		}
	}
	if informed < 3 {
		offErr, slopeErr = 0, 0
		for k := 1; k < n; k++ {
			if !sameView(reqs, k-1, k) {
				continue
			}
			dx := float64(reqs[k].Estimated - reqs[k-1].Estimated)
			dy := float64(reqs[k].Measured - reqs[k-1].Measured)
			offErr += math.Abs(dy - prior*dx)
			slopeErr += math.Abs(dy - fitted*dx)
		}
	}
	return offErr, slopeErr
}

func clampSlope(s float64) float64 { return math.Max(minSlope, math.Min(maxSlope, s)) }

// median of xs (sorted in place); 0 for none.
func median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return 0
	}
	sort.Float64s(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

func containsUsage(raw []byte) bool { return bytes.Contains(raw, []byte(`"usage"`)) }

// calibrate re-estimates every recorded request along spine (HEAD's raw
// spine) from per-node counts, in O(len(spine) + summaries' coverage):
//
//   - the request answered by the node at spine position p read the view
//     rendered from its predecessor, i.e. built on spine[:p];
//   - the summary in force was the latest one written before that node
//     (earlier in nodes.jsonl); it substituted only if its covered segment
//     lies, contiguous, inside spine[:p] (docs/FORMAT.md §4), else the view was raw.
//
// It also returns the matched requests, for an incremental run to extend.
//
// substituted is the summary the view substitutes (-1 for none): written
// after the latest request, it anchors the view on the client's prefix.
func calibrate(g *dag.Graph, spine []int, substituted int, counts []slimCount, b BudgetInfo, res *Result) (*Calibration, []MatchedRequest, headState) {
	matches := matchRequests(g, spine, counts, b)
	if len(matches) == 0 {
		return nil, nil, headState{}
	}
	sort.SliceStable(matches, func(a, b int) bool { return matches[a].pos < matches[b].pos })
	// users[k] counts user messages on spine[:k]: a turn starts at each.
	users := make([]int32, len(spine)+1)
	for k, i := range spine {
		users[k+1] = users[k]
		if g.S.RoleAt(i) == transcript.RoleUser && !g.S.IsSummary(i) {
			users[k+1]++
		}
	}
	// A new turn drops the hidden output unless the provider keeps it.
	dropped := !hiddenKeptAcrossTurns(b.Provider)
	reqs := make([]MatchedRequest, len(matches))
	for k, m := range matches {
		reqs[k] = MatchedRequest{Node: g.S.ID(m.node), Estimated: m.est, Framing: m.framing, Measured: m.measured, Hidden: int64(counts[m.node].hidden), Segment: m.segment, Tokenizer: m.tokenizer}
		if k > 0 {
			reqs[k].NewTurn = dropped && users[m.pos] > users[matches[k-1].pos]
		}
	}
	last := matches[len(matches)-1]
	// The view was compacted since the latest request when it substitutes
	// a summary written after it (file order).
	h := headState{UserAfterLatest: dropped && users[len(spine)] > users[last.pos], AfterCompaction: substituted > last.node}
	return newCalibration(reqs, res, h), reqs, h
}

// requestMatch is one recorded request and its re-estimate. Every matched
// request is kept (48 bytes each): the fit needs them in spine order.
type requestMatch struct {
	pos       int32
	tokenizer uint8
	node      int
	measured  int64
	est       int
	framing   int
	segment   int
}

// matchRequests re-estimates, in file order, each node on spine that
// records the provider's measured input (see calibrate).
func matchRequests(g *dag.Graph, spine []int, counts []slimCount, b BudgetInfo) []requestMatch {
	s := g.S
	pos := make([]int32, s.Len())
	for i := range pos {
		pos[i] = -1
	}
	// pre and preFraming are prefix sums of the nodes' totals and framing.
	pre, preFraming := make([]int, len(spine)+1), make([]int, len(spine)+1)
	firstTools := len(spine)
	for k, i := range spine {
		pos[i] = int32(k)
		pre[k+1] = pre[k] + int(counts[i].total)
		preFraming[k+1] = preFraming[k] + int(counts[i].overhead)
		if counts[i].tools && firstTools == len(spine) {
			firstTools = k
		}
	}
	type segment struct{ at, end int }
	segs := map[int]segment{}
	segmentOf := func(sum int) (segment, bool) {
		if sg, ok := segs[sum]; ok {
			return sg, sg.end > 0
		}
		sg := segment{}
		if covered, ok := g.Covered(sum); ok {
			if at, ok := g.SegmentOnSpine(spine, covered, g.Pred(sum)); ok {
				sg = segment{at: at, end: at + len(covered)}
			}
		}
		segs[sum] = sg
		return sg, sg.end > 0
	}
	var matches []requestMatch
	latestSummary, summaries := -1, 0
	for i := range s.Len() {
		// Walk nodes in file order so the summary in force is known.
		if s.IsSummary(i) {
			latestSummary = i
			summaries++
			continue
		}
		p := int(pos[i])
		if p <= 0 || counts[i].measured <= 0 {
			continue
		}
		est, framing := pre[p], preFraming[p]
		tools := firstTools < p
		if latestSummary >= 0 {
			if sg, ok := segmentOf(latestSummary); ok && sg.end <= p {
				est = est - (pre[sg.end] - pre[sg.at]) + int(counts[latestSummary].total)
				framing = framing - (preFraming[sg.end] - preFraming[sg.at]) + int(counts[latestSummary].overhead)
				tools = tools || counts[latestSummary].tools
			}
		}
		// The request's own extras (reply priming, a tool-use preamble) are
		// framing too: the view's overhead category holds them.
		extras := viewExtras(b.Provider, p, tools)
		matches = append(matches, requestMatch{pos: pos[i], node: i, measured: counts[i].measured, est: est + extras, framing: framing + extras, segment: summaries, tokenizer: counts[i].tokenizer})
	}
	return matches
}

// newCalibration summarizes matched requests (spine order, at least one)
// into the latest and worst errors and the fitted correction applied to
// res. reqs is kept as the History with NodeDetail.
func newCalibration(reqs []MatchedRequest, res *Result, h headState) *Calibration {
	abs := make([]float64, len(reqs))
	worst := 0
	for k, m := range reqs {
		rel := float64(m.Estimated-int(m.Measured)) / float64(m.Measured)
		abs[k] = math.Abs(rel)
		// The worst is the first with the largest |error|.
		if abs[k] > abs[worst] {
			worst = k
		}
	}
	latest := reqs[len(reqs)-1]
	c := &Calibration{Requests: len(reqs), LatestNode: latest.Node, Measured: latest.Measured, Estimated: latest.Estimated}
	if latest.Estimated > 0 {
		c.Ratio = float64(latest.Measured) / float64(latest.Estimated)
	}
	w := reqs[worst]
	c.WorstRelError, c.WorstNode = float64(w.Estimated-int(w.Measured))/float64(w.Measured), w.Node
	c.MedianRelError = median(abs)
	model := cmp.Or(res.ResolvedModel, res.Model)
	p := Priors{Slope: PriorSlope(res.Provider, model, res.EncodingIsProxy), FramingRate: PriorFramingRate(res.Provider, model, res.EncodingIsProxy)}
	if next := tokenizerOf(res.Provider, model); res.EncodingIsProxy && switched(latest.Tokenizer, next) {
		// The session's model (a /model command's, docs/ESTIMATE.md "A
		// model switch") counts with another tokenizer than the one that
		// answered the latest request: the requests are fitted with their
		// own tokenizer's priors and the prediction rescaled to the next.
		p = tokenizerPriors(latest.Tokenizer)
		h.NextSlope = tokenizerSlope(next)
	}
	if p.Slope != 1 {
		c.PriorSlope = p.Slope
	}
	c.PriorFramingRate = p.FramingRate
	f := FitRequestsPrior(reqs, p)
	c.Method, c.Slope, c.FittedSlope, c.NextMedianError, c.FramingRate = f.Method, f.Slope, f.FittedSlope, f.NextMedianError, f.FramingRate
	total, unrecorded, carried, framed := f.predictAt(res.Total, res.Categories[CatOverhead], h)
	c.UnrecordedTokens, c.CarriedTokens, c.FramingTokens, c.CalibratedTotal = int(math.Round(unrecorded)), int(math.Round(carried)), int(math.Round(framed)), total
	c.PrefixTokens, c.FirstUnrecordedTokens = int(math.Round(f.Prefix)), firstUnrecorded(reqs)
	c.prefix, c.hasPrefix = f.Prefix, true
	c.Anchor = AnchorLatest
	if h.AfterCompaction {
		c.Anchor = AnchorCompaction
	}
	if res.InputBudget > 0 {
		c.CalibratedBudgetPct = 100 * float64(c.CalibratedTotal) / float64(res.InputBudget)
	}
	if res.Nodes != nil {
		c.History = reqs
	}
	return c
}
