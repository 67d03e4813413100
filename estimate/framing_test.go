package estimate

import (
	"math"
	"math/rand/v2"
	"testing"
)

// framed builds requests of a tool loop whose provider counts content at
// slope and each counted framing token at framingCost (Anthropic's tool-use
// format spends several times the stated 3 tokens a message): steps of
// uneven content, one or two tool calls each (9 or 15 framing tokens).
func framed(n, prefix int, slope, framingCost float64, seed uint64) []MatchedRequest {
	r := rand.New(rand.NewPCG(seed, 2))
	reqs := make([]MatchedRequest, n)
	content, framing := 2000, 20
	for k := range reqs {
		if k > 0 {
			content += 20 + r.IntN(200)
			if r.IntN(5) == 0 {
				content += 5000 + r.IntN(10000) // a long tool output
			}
			framing += 9 + 6*r.IntN(2)
		}
		m := float64(prefix) + slope*float64(content) + framingCost*float64(framing)
		reqs[k] = MatchedRequest{Node: "a", Estimated: content + framing, Framing: framing, Measured: int64(math.Round(m))}
	}
	return reqs
}

func TestFitFramingRate(t *testing.T) {
	reqs := framed(40, 15000, 1.2, 10, 3)
	f := FitRequests(reqs)
	// measured = prefix + 1.2 × content + 10 × framing
	//          = prefix + 1.2 × estimated + 8.8 × framing.
	// (the measured inputs are rounded to whole tokens)
	if f.Method != MethodFraming || math.Abs(f.Slope-1.2) > 1e-3 || math.Abs(f.FramingRate-8.8) > 0.01 || f.NextMedianError > 1e-5 {
		t.Fatalf("fit %+v: want method %s, slope 1.2, framing rate 8.8, every next request exact", f, MethodFraming)
	}
	// A small step (a short tool result: 40 tokens, 9 of them framing) is
	// predicted exactly; the slope alone, fitted mostly on the long tool
	// outputs, leaves it short by the framing the provider adds.
	last := reqs[len(reqs)-1]
	want := last.Measured + int64(math.Round(1.2*31+10*9))
	if got := f.Predict(last.Estimated+40, last.Framing+9); math.Abs(float64(int64(got)-want)) > 1 {
		t.Errorf("a small step: predicted %d, want %d", got, want)
	}
	slopeOnly := FitRequests(withoutFraming(reqs))
	if got := slopeOnly.Predict(last.Estimated+40, 0); float64(want-int64(got)) < 60 {
		t.Errorf("slope alone (%s, %v) predicts %d for %d: the case does not exercise the framing", slopeOnly.Method, slopeOnly.Slope, got, want)
	}
	// After a compaction the anchor is the prefix: no framing carried over.
	if got, _, _, framed := f.predictAt(3000, 100, headState{AfterCompaction: true}); framed != 0 || got != int(math.Round(1.2*3000+f.Prefix)) {
		t.Errorf("after a compaction: %d (framing %v)", got, framed)
	}
}

func TestFitFramingNeedsEvidence(t *testing.T) {
	reqs := framed(40, 15000, 1.2, 10, 5)
	// Two steps are not enough for two rates.
	if f := FitRequests(reqs[:3]); f.Method == MethodFraming || f.FramingRate != 0 {
		t.Errorf("three requests: %+v", f)
	}
	if f := FitRequests(reqs[:4]); f.Method != MethodFraming {
		t.Errorf("four requests (three steps): %+v", f)
	}
	// No framing recorded (matched requests of an older sidecar): the
	// slope model.
	if f := FitRequests(withoutFraming(reqs)); f.Method == MethodFraming {
		t.Errorf("no framing: %+v", f)
	}
	// Framing growing in step with the content: the two rates are one.
	steady := make([]MatchedRequest, 10)
	for k := range steady {
		steady[k] = MatchedRequest{Node: "a", Estimated: 1000 + 100*k, Framing: 10 * k, Measured: int64(20000 + 130*k)}
	}
	if f := FitRequests(steady); f.Method == MethodFraming {
		t.Errorf("collinear framing: %+v", f)
	}
	// A fit that would remove framing (a negative rate) is not used.
	neg := framed(20, 15000, 1.2, -2, 5)
	if f := FitRequests(neg); f.Method == MethodFraming {
		t.Errorf("negative framing rate: %+v", f)
	}
}

func withoutFraming(reqs []MatchedRequest) []MatchedRequest {
	out := append([]MatchedRequest(nil), reqs...)
	for k := range out {
		out[k].Framing = 0
	}
	return out
}

// Until three steps fit the session's own rates, the prior framing rate
// prices the framing that followed the latest request (docs/ACCURACY.md,
// "The prior framing rate"); a fit rejected on more steps is not replaced
// by it, and the product takes the rate of the model's group.
func TestPriorFramingRate(t *testing.T) {
	one := []MatchedRequest{{Node: "a1", Estimated: 1000, Framing: 20, Measured: 5000}}
	f := FitRequestsPrior(one, Priors{Slope: 1, FramingRate: 10})
	// 100 more tokens, 10 of them framing: 5000 + 100 + 10 × 10.
	if f.Method != MethodOffset+MethodPriorFramingSuffix || f.FramingRate != 10 || f.Predict(1100, 30) != 5200 {
		t.Fatalf("one request with the prior rate: %+v predicts %d, want method %s and 5200", f, f.Predict(1100, 30), MethodOffset+MethodPriorFramingSuffix)
	}
	if f := FitRequestsPrior(one, Priors{Slope: ClaudeProxySlope, FramingRate: 10}); f.Method != MethodPriorSlope+MethodPriorFramingSuffix {
		t.Errorf("with a prior slope too: method %q", f.Method)
	}
	if f := FitRequests(one); f.FramingRate != 0 || f.Predict(1100, 30) != 5100 {
		t.Errorf("without priors: %+v predicts %d, want 5100", f, f.Predict(1100, 30))
	}
	// Framing that grows in step with the content: the two rates are one,
	// the fit is rejected on its 9 steps, and no prior stands in.
	lockstep := make([]MatchedRequest, 10)
	for k := range lockstep {
		lockstep[k] = MatchedRequest{Node: "a", Estimated: 1000 + 100*k, Framing: 20 + 10*k, Measured: int64(5000 + 130*k)}
	}
	if f := FitRequestsPrior(lockstep, Priors{Slope: 1, FramingRate: 10}); f.FramingRate != 0 || f.Method == MethodFraming {
		t.Errorf("a rejected fit on 9 steps took a framing rate: %+v", f)
	}
	if PriorFramingRate(ProviderAnthropic, "claude-sonnet-4-5", true) != ClaudeFramingRate || PriorFramingRate(ProviderAnthropic, "claude-opus-5", true) != ClaudeV47FramingRate ||
		PriorFramingRate(ProviderOpenAI, "gpt-5", false) != OtherFramingRate {
		t.Errorf("PriorFramingRate: Claude %v, Claude Opus 5 %v, OpenAI %v", PriorFramingRate(ProviderAnthropic, "claude-sonnet-4-5", true),
			PriorFramingRate(ProviderAnthropic, "claude-opus-5", true), PriorFramingRate(ProviderOpenAI, "gpt-5", false))
	}
}
