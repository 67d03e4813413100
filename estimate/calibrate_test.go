package estimate

import (
	"math"
	"math/rand/v2"
	"testing"
)

// synthetic builds requests whose measured input is prefix + slope ×
// estimated (+ noise of relative size jitter), the view growing unevenly.
func synthetic(n, prefix int, slope, jitter float64, seed uint64) []MatchedRequest {
	r := rand.New(rand.NewPCG(seed, 1))
	reqs := make([]MatchedRequest, n)
	est := 500
	for k := range reqs {
		est += 100 + r.IntN(3000)
		m := float64(prefix) + slope*float64(est)
		m *= 1 + jitter*(2*r.Float64()-1)
		reqs[k] = MatchedRequest{Node: "a", Estimated: est, Measured: int64(math.Round(m))}
	}
	return reqs
}

func TestFitRecoversPrefixAndSlope(t *testing.T) {
	for _, c := range []struct {
		prefix int
		slope  float64
	}{{18000, 1.0}, {16000, 1.4}, {5000, 2.2}, {30000, 0.8}} {
		reqs := synthetic(40, c.prefix, c.slope, 0, 7)
		f := FitRequests(reqs)
		if math.Abs(f.FittedSlope-c.slope)/c.slope > 0.01 {
			t.Errorf("prefix %d slope %v: fitted slope %v", c.prefix, c.slope, f.FittedSlope)
		}
		if math.Abs(f.Unrecorded-float64(c.prefix))/float64(c.prefix) > 0.01 {
			t.Errorf("prefix %d slope %v: unrecorded %v (method %s, slope %v)", c.prefix, c.slope, f.Unrecorded, f.Method, f.Slope)
		}
		wantMethod := MethodOffsetSlope
		if c.slope == 1 {
			wantMethod = MethodOffset
		}
		if f.Method != wantMethod {
			t.Errorf("prefix %d slope %v: method %s, want %s", c.prefix, c.slope, f.Method, wantMethod)
		}
		// Exact at the latest request; a far view is predicted by the model.
		last := reqs[len(reqs)-1]
		if got := f.Predict(last.Estimated, last.Framing); int64(got) != last.Measured {
			t.Errorf("latest: predicted %d, measured %d", got, last.Measured)
		}
		far := 2000
		want := float64(c.prefix) + c.slope*float64(far)
		if got := float64(f.Predict(far, 0)); math.Abs(got-want)/want > 0.01 {
			t.Errorf("prefix %d slope %v: a compacted view of %d predicted %v, want %v", c.prefix, c.slope, far, got, want)
		}
	}
}

func TestFitSlopeOnlyWhereItHelps(t *testing.T) {
	// Pure noise around a flat prefix: the fitted slope is meaningless,
	// the offset stays.
	reqs := synthetic(30, 20000, 1.0, 0.002, 3)
	if f := FitRequests(reqs); f.Method != MethodOffset || f.Slope != 1 {
		t.Errorf("noise: method %s slope %v (fitted %v)", f.Method, f.Slope, f.FittedSlope)
	}
	// Slopes outside [0.5, 3] are clamped.
	if f := FitRequests(synthetic(20, 1000, 5, 0, 4)); f.FittedSlope != maxSlope {
		t.Errorf("slope 5 fitted as %v, want the bound %v", f.FittedSlope, maxSlope)
	}
	// One request: offset only, exact there.
	one := []MatchedRequest{{Estimated: 1000, Measured: 18000}}
	if f := FitRequests(one); f.Method != MethodOffset || f.Predict(1000, 0) != 18000 || f.Predict(1361, 0) != 18361 {
		t.Errorf("one request: %+v", f)
	}
}

func TestCorrectionRawBudget(t *testing.T) {
	c := &Correction{UnrecordedTokens: 16000, Slope: 1.25}
	if got := c.Apply(8000); got != 26000 {
		t.Fatalf("Apply(8000) = %d", got)
	}
	raw := c.RawBudget(100000)
	if c.Apply(raw) > 100000 || c.Apply(raw+1) <= 100000 {
		t.Fatalf("RawBudget(100000) = %d: calibrates to %d, +1 to %d", raw, c.Apply(raw), c.Apply(raw+1))
	}
	// An overcounting proxy (negative prefix) never predicts below zero.
	if got := (&Correction{UnrecordedTokens: -500, Slope: 1}).Apply(100); got != 0 {
		t.Fatalf("negative prefix on a small view: %d", got)
	}
	var none *Correction
	if none.RawBudget(5) != 5 {
		t.Fatal("nil correction changed the budget")
	}
}

func TestFitShortSessionJudgesSlopeOnSteps(t *testing.T) {
	// Four requests, measured = 15,000 + 1.5 × estimated: too short for a
	// replay, but the steps show the slope.
	reqs := synthetic(4, 15000, 1.5, 0, 9)
	f := FitRequests(reqs)
	if f.Method != MethodOffsetSlope || math.Abs(f.Slope-1.5) > 0.01 {
		t.Fatalf("short session: method %s slope %v", f.Method, f.Slope)
	}
	// The same length with slope 1: the offset stays.
	if f := FitRequests(synthetic(4, 15000, 1, 0, 9)); f.Method != MethodOffset {
		t.Fatalf("short session, slope 1: method %s slope %v", f.Method, f.Slope)
	}
}
