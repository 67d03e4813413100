package estimate

import "github.com/ctxfold/ctxfold/transcript"

// SeriesPoint is one recorded request as the accuracy check cuts it
// (docs/ACCURACY.md, "Every cut, pooled"): the provider's recorded input
// beside the calibrated total that `estimate --head <its predecessor>`
// gives, calibrated on the requests before it alone.
type SeriesPoint struct {
	Node     string `json:"node"`
	Recorded int64  `json:"recorded"`
	// Estimated is the calibrated prediction; for the first request,
	// which no earlier request calibrates, the raw estimate (Calibrated
	// false) or, with a prior, the raw estimate and what the prior adds.
	Estimated  int  `json:"estimated"`
	Raw        int  `json:"raw"`
	Calibrated bool `json:"calibrated"`
	// AfterCompaction: a summary was written between the previous request
	// and this one, so the prediction is anchored on the client's prefix.
	AfterCompaction bool `json:"after_compaction,omitempty"`
}

// Series predicts every matched request (Calibration.History, spine
// order) from the ones before it, as a run at each request's cut would:
// the view request k read is reqs[k].Estimated (matchRequests re-estimates
// it as sent), the fit is FitRequests(reqs[:k]) and HEAD's state at the
// cut is whether a user message or a compaction came since request k−1.
// One pass over the history instead of a render and count per request:
// the carried output is accumulated as WithoutCarried would for each
// prefix, each fit reads its window (FitWindow), and the client's prefix
// (a scan of every earlier request) is found only where a compaction
// anchors on it.
func Series(reqs []MatchedRequest) []SeriesPoint { return SeriesWithPrior(reqs, -1, NoPriors) }

// Series is the calibration's history predicted as Series does, with the
// calibration's priors (what `estimate` at each cut uses).
func (c *Calibration) Series() []SeriesPoint {
	p := Priors{Slope: c.PriorSlope, FramingRate: c.PriorFramingRate}
	if p.Slope == 0 {
		p.Slope = 1
	}
	return SeriesWithPrior(c.History, -1, p)
}

// SeriesWithPrior is Series with request 1 predicted as the cut before it
// gives with a prior (Prior.Unrecorded: unrecorded is what the prior adds
// to its view; negative for no prior, when request 1 is the raw estimate)
// and pr as every fit's priors (FitRequestsPrior).
func SeriesWithPrior(reqs []MatchedRequest, unrecorded int, pr Priors) []SeriesPoint {
	out := make([]SeriesPoint, len(reqs))
	adjusted := make([]MatchedRequest, len(reqs))
	var h int64 // the hidden output request k carries
	for k, r := range reqs {
		p := SeriesPoint{Node: r.Node, Recorded: r.Measured, Raw: r.Estimated, Estimated: r.Estimated}
		if k == 0 && unrecorded >= 0 {
			p.Estimated, p.Calibrated = r.Estimated+unrecorded, true
		}
		if k > 0 {
			// WithoutCarried(reqs[:k]) is adjusted[:k] and this carry.
			carried := float64(h + reqs[k-1].Hidden)
			hs := headState{UserAfterLatest: r.NewTurn, AfterCompaction: r.Segment != reqs[k-1].Segment}
			prk := pr
			if switched(reqs[k-1].Tokenizer, r.Tokenizer) {
				// The cut before request k names its model (a /model command):
				// fitted and rescaled as estimate does there (newCalibration).
				hs.NextSlope, prk = tokenizerSlope(r.Tokenizer), tokenizerPriors(reqs[k-1].Tokenizer)
			}
			p.Estimated, _, _, _ = fitAdjusted(adjusted[:k], carried, hs.AfterCompaction, prk).predictAt(r.Estimated, r.Framing, hs)
			p.Calibrated, p.AfterCompaction = true, hs.AfterCompaction
			if r.NewTurn || r.Segment != reqs[k-1].Segment {
				h = 0 // dropped: a new turn (OpenAI's), or a compaction since
			} else {
				h += reqs[k-1].Hidden
			}
		}
		adjusted[k] = r
		adjusted[k].Measured = r.Measured - h
		out[k] = p
	}
	return out
}

// RecordedInput is the input the provider recorded for the request that
// produced a node, as calibration reads it (the whole prompt).
func RecordedInput(u *transcript.Usage) int64 {
	if u == nil {
		return 0
	}
	return measuredInput(u)
}

// WithoutCarried is reqs with each measured input less the hidden output
// the request carried from earlier requests (of its turn where a new turn
// drops it, of its segment: a compaction drops it), and that carry for
// the request after the last: what the linear model fits.
func WithoutCarried(reqs []MatchedRequest) ([]MatchedRequest, float64) {
	out := make([]MatchedRequest, len(reqs))
	var h int64
	for k, r := range reqs {
		if k > 0 {
			if r.NewTurn || r.Segment != reqs[k-1].Segment {
				h = 0 // dropped: a new turn (OpenAI's), or a compaction since
			} else {
				h += reqs[k-1].Hidden
			}
		}
		out[k] = r
		out[k].Measured = r.Measured - h
	}
	if n := len(reqs); n > 0 {
		h += reqs[n-1].Hidden
	}
	return out, float64(h)
}
