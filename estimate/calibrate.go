package estimate

import (
	"bytes"
	"math"
	"sort"

	"github.com/ctxfold/ctxfold/dag"
)

// Calibration compares the estimate with what the provider measured.
// Each assistant node on HEAD's spine that recorded usage.input_tokens is
// one matched request: the view it was answering is re-estimated as it was
// sent (seed 000 §4) and compared with the recorded figure.
type Calibration struct {
	// Requests is how many requests matched.
	Requests int `json:"requests"`
	// LatestNode is the assistant node of the latest matched request, with
	// its measured and estimated input; Ratio = Measured / Estimated.
	LatestNode string  `json:"latest_node"`
	Measured   int64   `json:"measured"`
	Estimated  int     `json:"estimated"`
	Ratio      float64 `json:"ratio"`
	// CalibratedTotal is the view's total × Ratio: the "calibrated
	// estimate"; CalibratedBudgetPct the same against the input budget.
	CalibratedTotal     int     `json:"calibrated_total"`
	CalibratedBudgetPct float64 `json:"calibrated_budget_pct"`
	// MedianRelError and WorstRelError are over all matched requests,
	// (estimated − measured) / measured; the worst keeps its sign.
	MedianRelError float64 `json:"median_rel_error"`
	WorstRelError  float64 `json:"worst_rel_error"`
	WorstNode      string  `json:"worst_node"`
}

func containsUsage(raw []byte) bool { return bytes.Contains(raw, []byte(`"usage"`)) }

// calibrate re-estimates every recorded request along spine (HEAD's raw
// spine) from per-node counts, in O(len(spine) + summaries' coverage):
//
//   - the request answered by the node at spine position p read the view
//     rendered from its predecessor, i.e. built on spine[:p];
//   - the summary in force was the latest one written before that node
//     (earlier in nodes.jsonl); it substituted only if its covered segment
//     lies, contiguous, inside spine[:p] (seed §3), else the view was raw.
func calibrate(g *dag.Graph, spine []int, counts []slimCount, b BudgetInfo, res *Result) *Calibration {
	s := g.S
	pos := make([]int32, s.Len())
	for i := range pos {
		pos[i] = -1
	}
	pre := make([]int, len(spine)+1)
	firstTools := len(spine)
	for k, i := range spine {
		pos[i] = int32(k)
		pre[k+1] = pre[k] + int(counts[i].total)
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
	// Only the latest and the worst request are kept whole; the median
	// needs every |error|, 8 bytes a request.
	type match struct {
		node     int
		measured int64
		est      int
		rel      float64
	}
	var latest, worst match
	var abs []float64
	latestSummary := -1
	for i := range s.Len() {
		// Walk nodes in file order so the summary in force is known.
		if s.IsSummary(i) {
			latestSummary = i
			continue
		}
		p := int(pos[i])
		if p <= 0 || counts[i].measured <= 0 {
			continue
		}
		est := pre[p]
		tools := firstTools < p
		if latestSummary >= 0 {
			if sg, ok := segmentOf(latestSummary); ok && sg.end <= p {
				est = est - (pre[sg.end] - pre[sg.at]) + int(counts[latestSummary].total)
				tools = tools || counts[latestSummary].tools
			}
		}
		est += viewExtras(b.Provider, p, tools)
		measured := counts[i].measured
		m := match{node: i, measured: measured, est: est, rel: float64(est-int(measured)) / float64(measured)}
		// The latest request is the one furthest along the spine; the
		// worst the first with the largest |error|.
		if len(abs) == 0 || pos[m.node] > pos[latest.node] {
			latest = m
		}
		if len(abs) == 0 || math.Abs(m.rel) > math.Abs(worst.rel) {
			worst = m
		}
		abs = append(abs, math.Abs(m.rel))
	}
	if len(abs) == 0 {
		return nil
	}
	c := &Calibration{Requests: len(abs), LatestNode: s.ID(latest.node), Measured: latest.measured, Estimated: latest.est}
	if latest.est > 0 {
		c.Ratio = float64(latest.measured) / float64(latest.est)
		c.CalibratedTotal = int(math.Round(float64(res.Total) * c.Ratio))
		if res.InputBudget > 0 {
			c.CalibratedBudgetPct = 100 * float64(c.CalibratedTotal) / float64(res.InputBudget)
		}
	}
	sort.Float64s(abs)
	if n := len(abs); n%2 == 1 {
		c.MedianRelError = abs[n/2]
	} else {
		c.MedianRelError = (abs[n/2-1] + abs[n/2]) / 2
	}
	c.WorstRelError, c.WorstNode = worst.rel, s.ID(worst.node)
	return c
}
