package compact

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/summarize"
	"github.com/ctxfold/ctxfold/transcript"
)

// longHistory is a session of turns, each naming its own file and
// function (facts) beside a long answer, so that the facts of a long
// covered history outgrow a small window's ceiling.
func longHistory(t *testing.T, turns, filler int) string {
	t.Helper()
	var nodes []transcript.Node
	pred := ""
	long := strings.TrimSpace(strings.Repeat("the answer goes on ", filler))
	for i := range turns {
		u, a := fmt.Sprintf("u%d", i), fmt.Sprintf("a%d", i)
		nodes = append(nodes,
			transcript.Node{ID: u, Predecessor: pred, Role: transcript.RoleUser,
				Content: transcript.TextContent(fmt.Sprintf("Fix pkg/mod%d/file%d.go where handleThing%d fails", i, i, i))},
			transcript.Node{ID: a, Predecessor: u, Role: transcript.RoleAssistant, Content: transcript.TextContent(long)})
		pred = a
	}
	return newSession(t, "", nodes)
}

// ceilingOf compacts dir with the extractive summarizer under a small
// window and returns the result and how many facts the summary left out.
func ceilingOf(t *testing.T, dir string, max int) (*Result, int) {
	t.Helper()
	o := opts(dir, summarize.Extractive{}, 0)
	o.Estimate.Window = 20_000 // ceiling 4,000 by the window, target 8,000
	o.MaxSummaryTokens = max
	res, err := Compact(context.Background(), o)
	if err != nil || res.Outcome != OutcomeSucceeded || res.Survival == nil {
		t.Fatalf("%v %+v", err, res)
	}
	return res, res.Survival.Total - res.Survival.Kept
}

// The summary's ceiling follows a covered history longer than the window
// allows for (5% of it, within the retained-token target), and the facts
// grow into it: a history whose facts a window's ceiling cuts keeps them
// all. A short history keeps the window's ceiling; --max-summary-tokens
// fixes it.
func TestCeilingFollowsTheCoveredHistory(t *testing.T) {
	long := longHistory(t, 400, 95)
	res, lost := ceilingOf(t, long, 0)
	if res.CeilingBasis != CeilingHistory || res.SummaryCeiling <= 4_000 || res.SummaryCeiling > res.Plan.Target ||
		res.SummaryCeiling > res.Plan.ReplacedTokens/20+1 {
		t.Fatalf("ceiling %d (%s) for %d replaced tokens, target %d", res.SummaryCeiling, res.CeilingBasis, res.Plan.ReplacedTokens, res.Plan.Target)
	}
	t.Logf("ceiling %d, replaced %d, summary %d tokens, cap %d, facts %d", res.SummaryCeiling, res.Plan.ReplacedTokens, res.SummaryTokens, res.SummaryCap, res.Survival.Total)
	if res.SummaryCap > 4_000 {
		t.Errorf("the cap %d followed the history too: only the facts may grow", res.SummaryCap)
	}
	if lost != 0 || res.SummaryTokens <= 4_000 {
		t.Errorf("under the grown ceiling: %d facts lost, summary %d tokens", lost, res.SummaryTokens)
	}
	// The same history under the window's ceiling (the flag fixes it)
	// loses facts: the growth was needed.
	fixed, lostFixed := ceilingOf(t, longHistory(t, 400, 95), 4_000)
	if fixed.CeilingBasis != CeilingFlag || lostFixed == 0 {
		t.Errorf("under a 4,000-token ceiling: %d facts lost (%s)", lostFixed, fixed.CeilingBasis)
	}
	short, _ := ceilingOf(t, longHistory(t, 30, 120), 0)
	if short.CeilingBasis != CeilingWindow || short.SummaryCeiling > 4_000 {
		t.Errorf("a short history: ceiling %d (%s)", short.SummaryCeiling, short.CeilingBasis)
	}
}
