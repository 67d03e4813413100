package estimate

import "math"

// The framing rate (docs/ESTIMATE.md, "Calibration"). The chat format's
// framing is counted by a stated rule, OpenAI's 3 tokens a message and a
// tool call (count.go); Anthropic and Google do not publish theirs, and on
// the shared real transcripts every step that adds a tool call and its
// result grows the recorded input by far more than its content: fitted
// alone, the slope follows the large steps (a long tool output) and leaves
// every small one short by that framing. So with enough steps the content
// slope and the framing rate are fitted together on the steps' growth:
//
//	Δmeasured ≈ slope × Δestimated + rate × Δframing
//
// where Δframing is the step's growth in the counted framing (the overhead
// category). A step's error grows with how much it adds (each token's rate
// varies on its own), so each step weighs 1/|Δestimated|: a step of 60
// tokens counts as much as one of 6,000 in deciding the rates, instead of
// 10,000 times less.

// minFramingSteps is how many steps the two rates need: more than the two
// unknowns, so that a fit is not an exact solve through two points.
const minFramingSteps = 3

// The prior framing rates are what calibration uses until a session has
// the minFramingSteps steps to fit its own rate: its second to fourth
// requests, when a person first reads the status line. Without them those
// are predicted with the stated rule alone, short by every tool call's
// real framing (docs/ACCURACY.md, "The prior framing rate"). Each is the
// weighted least-squares rate (each step weighing 1/|Δestimated|, as the
// fit's) of each step's recorded growth beyond its prior slope's share on
// its framing's growth, pooled over every step of the shared real
// transcripts of its group (steps across a compaction left out):
// ClaudeFramingRate over Claude Code's (a model with a prior slope),
// OtherFramingRate over the others, Codex's. TestAccuracyLeaveOneOut
// recomputes both, fails when they are not these figures, and predicts
// each session with the rate pooled over the others of its group.
const (
	ClaudeFramingRate = 11.773
	OtherFramingRate  = 0.945
)

// PriorFramingRate is the prior framing rate of a model: ClaudeFramingRate
// where it has a prior slope (PriorSlope; ClaudeV47FramingRate with Claude
// Opus 4.7's tokenizer), else OtherFramingRate.
func PriorFramingRate(provider, model string, proxy bool) float64 {
	switch {
	case PriorSlope(provider, model, proxy) == 1:
		return OtherFramingRate
	case claudeV47Tokenizer(model):
		return ClaudeV47FramingRate
	}
	return ClaudeFramingRate
}

// Priors are what calibration uses where a session's own requests cannot
// fit a parameter yet: the slope (PriorSlope) and the framing rate
// (PriorFramingRate). NoPriors is neither: slope 1, no framing rate.
type Priors struct {
	Slope       float64
	FramingRate float64
}

// NoPriors fits a session on its own requests alone.
var NoPriors = Priors{Slope: 1}

// MethodPriorFramingSuffix ends the method of a fit that adds the prior
// framing rate (offset+prior-framing, offset+prior-slope+prior-framing,
// offset+slope+prior-framing).
const MethodPriorFramingSuffix = "+prior-framing"

// framingFit is the content slope and the framing rate fitted on steps.
type framingFit struct {
	slope, framing float64
	ok             bool
	// steps is how many steps it was fitted on: with fewer than
	// minFramingSteps the prior rate stands in (a fit rejected on more is
	// not replaced by it).
	steps int
}

// framingSums accumulates the weighted normal equations of the fit.
type framingSums struct {
	ee, ef, ff, em, fm float64
	steps              int
}

func (s *framingSums) add(de, df, dm float64) {
	if de == 0 {
		return
	}
	w := 1 / math.Abs(de)
	s.ee += w * de * de
	s.ef += w * de * df
	s.ff += w * df * df
	s.em += w * de * dm
	s.fm += w * df * dm
	s.steps++
}

// solve is the fit, ok only with enough steps whose framing does not grow
// in step with their content (else the two rates are one), a slope inside
// the slope bounds and a rate that adds framing rather than removing it.
func (s framingSums) solve() framingFit {
	det := s.ee*s.ff - s.ef*s.ef
	if s.steps < minFramingSteps || s.ff <= 0 || det <= 1e-9*s.ee*s.ff {
		return framingFit{steps: s.steps}
	}
	slope := (s.em*s.ff - s.fm*s.ef) / det
	rate := (s.ee*s.fm - s.ef*s.em) / det
	if slope < minSlope || slope > maxSlope || rate < 0 {
		return framingFit{steps: s.steps}
	}
	return framingFit{slope: slope, framing: rate, ok: true, steps: s.steps}
}

// framingRates returns, for each request k of reqs, the rates fitted on
// the steps before it (a replay never judges them on the request it
// predicts), and the rates fitted on every step; steps across a
// compaction are left out.
func framingRates(reqs []MatchedRequest) (before []framingFit, all framingFit) {
	var sums framingSums
	before = make([]framingFit, len(reqs))
	for k := range reqs {
		before[k] = sums.solve()
		if k+1 < len(reqs) && sameView(reqs, k, k+1) {
			sums.add(float64(reqs[k+1].Estimated-reqs[k].Estimated), float64(reqs[k+1].Framing-reqs[k].Framing),
				float64(reqs[k+1].Measured-reqs[k].Measured))
		}
	}
	return before, sums.solve()
}
