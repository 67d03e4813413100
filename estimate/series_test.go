package estimate

import (
	"math/rand/v2"
	"testing"
)

// Series is, at every request, FitRequests on the requests before it
// predicting the request's view: checked on a history with hidden output
// (Codex reasoning), new turns and compactions, longer than FitWindow.
func TestSeriesIsFitOnEachPrefix(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	var reqs []MatchedRequest
	est, seg := 2000, 0
	for k := range 3*FitWindow + 11 {
		if k > 0 && r.IntN(60) == 0 {
			seg++
			est = 3000 + r.IntN(2000)
		}
		est += 50 + r.IntN(900)
		framing := est / 40
		reqs = append(reqs, MatchedRequest{Node: "n", Estimated: est, Framing: framing, Measured: int64(float64(est)*1.07) + 9000 + int64(r.IntN(300)),
			Hidden: int64(r.IntN(3) * r.IntN(400)), NewTurn: r.IntN(4) == 0, Segment: seg})
	}
	series := Series(reqs)
	compactions := 0
	for k := 1; k < len(reqs); k++ {
		h := headState{UserAfterLatest: reqs[k].NewTurn, AfterCompaction: reqs[k].Segment != reqs[k-1].Segment}
		want, _, _, _ := FitRequests(reqs[:k]).predictAt(reqs[k].Estimated, reqs[k].Framing, h)
		if series[k].Estimated != want || !series[k].Calibrated || series[k].AfterCompaction != h.AfterCompaction {
			t.Fatalf("request %d: series %+v, want %d", k, series[k], want)
		}
		if h.AfterCompaction {
			compactions++
		}
	}
	if compactions == 0 || series[0].Calibrated || series[0].Estimated != reqs[0].Estimated {
		t.Fatalf("%d compactions; first point %+v", compactions, series[0])
	}
}
