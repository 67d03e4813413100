package fit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/fit"
	"github.com/ctxfold/ctxfold/summarize"
	"github.com/ctxfold/ctxfold/transcript"
)

// toolHeavy builds a rendered view in memory: a system prompt, then turns
// where the assistant calls a tool whose output is a long log.
func toolHeavy(turns, logLines int) []*transcript.Node {
	nodes := []*transcript.Node{{ID: "sys", Role: transcript.RoleSystem, Content: transcript.TextContent("You are a build engineer.")}}
	for t := 0; t < turns; t++ {
		u := &transcript.Node{ID: fmt.Sprintf("u%d", t), Role: transcript.RoleUser,
			Content: transcript.TextContent(fmt.Sprintf("Step %d: run the integration suite for package pkg%d and report failures. Keep the flag -count=1.", t, t))}
		args, _ := json.Marshal(map[string]string{"cmd": fmt.Sprintf("go test -count=1 ./pkg%d/...", t)})
		a := &transcript.Node{ID: fmt.Sprintf("a%d", t), Role: transcript.RoleAssistant, Content: transcript.TextContent("Running it."),
			ToolCalls: []transcript.ToolCall{{ID: fmt.Sprintf("call_%d", t), Name: "bash", Arguments: args}}}
		var log strings.Builder
		for i := 0; i < logLines; i++ {
			fmt.Fprintf(&log, "=== RUN   TestIntegration/case_%03d_%d\n--- PASS: TestIntegration/case_%03d_%d (0.%02ds)\n", i, t, i, t, i%100)
		}
		fmt.Fprintf(&log, "FAIL: TestIntegration/case_042_%d: expected 200, got 503 from /api/v%d/health\n", t, t)
		r := &transcript.Node{ID: fmt.Sprintf("r%d", t), Role: transcript.RoleTool, ToolCallID: fmt.Sprintf("call_%d", t), Content: transcript.TextContent(log.String())}
		d := &transcript.Node{ID: fmt.Sprintf("d%d", t), Role: transcript.RoleAssistant,
			Content: transcript.TextContent(fmt.Sprintf("pkg%d: one failure, case_042 got 503 from the health endpoint.", t))}
		nodes = append(nodes, u, a, r, d)
	}
	return nodes
}

func total(t *testing.T, nodes []*transcript.Node) int {
	t.Helper()
	res, err := estimate.Nodes(context.Background(), nodes, estimate.Options{Window: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return res.Total
}

// options gives a budget of exactly budget tokens.
func options(budget int, s summarize.Summarizer) fit.Options {
	const outputCap = 100
	return fit.Options{Estimate: estimate.Options{Window: budget + outputCap, OutputCap: outputCap}, Margin: 0, Summarizer: s}
}

func fitted(t *testing.T, nodes []*transcript.Node, opts fit.Options) ([]*transcript.Node, *fit.Report) {
	t.Helper()
	out, rep, err := fit.Fit(context.Background(), nodes, opts)
	if err != nil {
		t.Fatalf("Fit: %v", err)
	}
	if got := total(t, out); got > rep.InputBudget {
		t.Fatalf("fitted body is %d tokens, over the budget %d", got, rep.InputBudget)
	}
	if got := total(t, out); got != rep.TokensAfter {
		t.Fatalf("report says %d tokens after, estimate says %d", rep.TokensAfter, got)
	}
	return out, rep
}

func byID(nodes []*transcript.Node) map[string]*transcript.Node {
	m := map[string]*transcript.Node{}
	for _, n := range nodes {
		m[n.ID] = n
	}
	return m
}

func encode(t *testing.T, n *transcript.Node) string {
	t.Helper()
	b, err := json.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAlreadyFitsIsUnchanged(t *testing.T) {
	nodes := toolHeavy(2, 20)
	out, rep := fitted(t, nodes, options(total(t, nodes), summarize.Extractive{}))
	if len(rep.Transformations) != 0 || rep.SummaryCalls != 0 {
		t.Fatalf("a view that fits was transformed: %+v", rep)
	}
	if len(out) != len(nodes) {
		t.Fatalf("got %d nodes, want %d", len(out), len(nodes))
	}
	for k := range nodes {
		if out[k] != nodes[k] {
			t.Fatalf("node %d replaced", k)
		}
	}
}

func TestToolResultsSummarizedFirst(t *testing.T) {
	nodes := toolHeavy(4, 60)
	before := total(t, nodes)
	// Summarizing one long log saves far more than 300 tokens.
	out, rep := fitted(t, nodes, options(before-300, summarize.Extractive{}))
	if len(rep.Transformations) == 0 {
		t.Fatal("nothing was transformed")
	}
	for _, tr := range rep.Transformations {
		if tr.Step != fit.StepToolResults {
			t.Fatalf("step 1 should have sufficed, got %s", tr.Step)
		}
		if tr.TokensAfter >= tr.TokensBefore {
			t.Fatalf("a summary did not shrink its result: %+v", tr)
		}
	}
	if rep.Transformations[0].NodeIDs[0] != "r0" {
		t.Fatalf("oldest first: the first summarized result is %v, want r0", rep.Transformations[0].NodeIDs)
	}
	got := byID(out)
	if len(out) != len(nodes) {
		t.Fatalf("step 1 removed nodes: %d → %d", len(nodes), len(out))
	}
	for _, n := range nodes {
		g := got[n.ID]
		switch n.Role {
		case transcript.RoleUser, transcript.RoleAssistant, transcript.RoleSystem:
			if encode(t, g) != encode(t, n) {
				t.Fatalf("%s changed:\n%s\n%s", n.ID, encode(t, n), encode(t, g))
			}
		case transcript.RoleTool:
			if g.ToolCallID != n.ToolCallID {
				t.Fatalf("%s: result id changed %q → %q", n.ID, n.ToolCallID, g.ToolCallID)
			}
		}
	}
	r0 := got["r0"].Content.PlainText()
	if !strings.HasPrefix(r0, fit.ToolSummaryPrefix) {
		t.Fatalf("summarized result lacks its notice: %.80q", r0)
	}
}

func TestCheckpointKeepsUserMessagesVerbatim(t *testing.T) {
	// Results too short to be worth summarizing: step 1 cannot help, so
	// older history must be folded.
	nodes := toolHeavy(12, 3)
	last := nodes[len(nodes)-4:] // the latest user turn and its assistant segment
	users := []*transcript.Node{nodes[0]}
	for _, n := range nodes {
		if n.Role == transcript.RoleUser {
			users = append(users, n)
		}
	}
	budget := total(t, append(users, last[1:]...)) + fit.DefaultSummaryTokens + 200
	out, rep := fitted(t, nodes, options(budget, summarize.Extractive{}))
	steps := map[string]bool{}
	for _, tr := range rep.Transformations {
		steps[tr.Step] = true
	}
	if !steps[fit.StepCheckpoint] || steps[fit.StepToolResults] {
		t.Fatalf("expected a checkpoint and no tool-result summary, got %+v", rep.Transformations)
	}
	got := byID(out)
	for _, n := range nodes {
		if n.Role == transcript.RoleUser || n.Role == transcript.RoleSystem {
			g, ok := got[n.ID]
			if !ok {
				t.Fatalf("user message %s was dropped", n.ID)
			}
			if encode(t, g) != encode(t, n) {
				t.Fatalf("user message %s changed", n.ID)
			}
		}
	}
	// The latest assistant segment stays verbatim (its tool result may be
	// summarized by step 1, but its call and its text may not change).
	for _, n := range last[1:] {
		g, ok := got[n.ID]
		if !ok {
			t.Fatalf("latest segment node %s was dropped", n.ID)
		}
		if n.Role == transcript.RoleAssistant && encode(t, g) != encode(t, n) {
			t.Fatalf("latest segment node %s changed", n.ID)
		}
	}
	// Order of what survived is the original order.
	pos := map[string]int{}
	for k, n := range nodes {
		pos[n.ID] = k
	}
	prev := -1
	for _, n := range out {
		if p, ok := pos[n.ID]; ok {
			if p < prev {
				t.Fatalf("order changed at %s", n.ID)
			}
			prev = p
		}
	}
	if steps[fit.StepCheckpoint] {
		var cp *transcript.Node
		for _, n := range out {
			if strings.HasPrefix(n.ID, fit.CheckpointIDPrefix) {
				cp = n
			}
		}
		if cp == nil || !strings.HasPrefix(cp.Content.PlainText(), fit.CheckpointPrefix) {
			t.Fatalf("checkpoint node missing or unlabelled")
		}
	}
}

func TestToolGroupsNeverSplit(t *testing.T) {
	nodes := toolHeavy(6, 40)
	for budget := total(t, nodes) - 100; budget > 400; budget -= 700 {
		out, _, err := fit.Fit(context.Background(), nodes, options(budget, nil))
		var dnf *fit.DoesNotFitError
		if errors.As(err, &dnf) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		ids := byID(out)
		for _, n := range nodes {
			for _, c := range n.ToolCalls {
				_, hasCall := ids[n.ID]
				_, hasResult := ids["r"+strings.TrimPrefix(c.ID, "call_")]
				if hasCall != hasResult {
					t.Fatalf("budget %d: call %s kept=%v but its result kept=%v", budget, c.ID, hasCall, hasResult)
				}
			}
		}
	}
}

func TestProtectedOverBudgetDoesNotFit(t *testing.T) {
	nodes := toolHeavy(1, 200) // the only turn is the latest: all protected
	_, _, err := fit.Fit(context.Background(), nodes, options(100, summarize.Extractive{}))
	var dnf *fit.DoesNotFitError
	if !errors.As(err, &dnf) {
		t.Fatalf("want DoesNotFitError, got %v", err)
	}
	if dnf.Tokens <= dnf.Budget || dnf.Protected <= dnf.Budget {
		t.Fatalf("bad error: %+v", dnf)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("over by %d", dnf.Tokens-dnf.Budget)) {
		t.Fatalf("message does not say by how much: %v", err)
	}
}

func TestExplicitOutputCapIsNeverReduced(t *testing.T) {
	nodes := toolHeavy(1, 5)
	_, _, err := fit.Fit(context.Background(), nodes, fit.Options{Estimate: estimate.Options{Model: "gpt-4o", OutputCap: 50000}})
	var oc *fit.OutputCapError
	if !errors.As(err, &oc) {
		t.Fatalf("want OutputCapError, got %v", err)
	}
}

// A window that leaves no input budget is a usage error before any work:
// no summary call, no report, and the figures named.
func TestNoInputBudgetIsRefusedBeforeAnyWork(t *testing.T) {
	nodes := toolHeavy(10, 30)
	for _, tc := range []struct{ window, margin int }{{10, fit.DefaultMargin}, {200, 300}, {900, 1000}, {100, 100}} {
		s := &countingSummarizer{}
		opts := options(tc.window, s)
		opts.Margin = tc.margin
		out, rep, err := fit.Fit(context.Background(), nodes, opts)
		var nb *fit.NoBudgetError
		if !errors.As(err, &nb) || out != nil || rep != nil {
			t.Fatalf("window %d margin %d: want NoBudgetError, got %v (%d nodes, report %v)", tc.window, tc.margin, err, len(out), rep)
		}
		if s.calls.Load() != 0 {
			t.Fatalf("window %d: %d summary calls before refusing", tc.window, s.calls.Load())
		}
		if nb.Window != opts.Estimate.Window || (tc.margin >= 0 && nb.Margin != tc.margin) || nb.InputBudget > 0 || nb.InputBudget != nb.Window-nb.OutputReserve-nb.Margin {
			t.Fatalf("figures %+v", nb)
		}
		want := fmt.Sprintf("window %d − output reserve %d − margin %d = %d tokens", nb.Window, nb.OutputReserve, nb.Margin, nb.InputBudget)
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("message %q does not name the figures (%q)", err, want)
		}
	}
}

// countingSummarizer fails or sleeps, and counts its calls.
type countingSummarizer struct {
	calls atomic.Int32
	sleep time.Duration
	fail  bool
}

func (c *countingSummarizer) Name() string     { return "counting" }
func (c *countingSummarizer) CacheKey() string { return "counting" }

func (c *countingSummarizer) Summarize(ctx context.Context, req summarize.Request) (string, error) {
	c.calls.Add(1)
	if c.sleep > 0 {
		select {
		case <-time.After(c.sleep):
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	if c.fail {
		return "", errors.New("summarizer down")
	}
	return "short", nil
}

func TestCallBudgetHoldsWithFailingSummarizer(t *testing.T) {
	nodes := toolHeavy(60, 30) // far more summarizable results than 32
	s := &countingSummarizer{fail: true}
	opts := options(total(t, nodes)/3, s)
	opts.MaxCalls = 32
	_, rep, err := fit.Fit(context.Background(), nodes, opts)
	var dnf *fit.DoesNotFitError
	if err != nil && !errors.As(err, &dnf) {
		t.Fatal(err)
	}
	// 60 results are worth summarizing and each call fails: the budget is
	// spent exactly, then refused.
	if got := s.calls.Load(); got != 32 {
		t.Fatalf("summarizer called %d times, want exactly 32", got)
	}
	if rep == nil || rep.SummaryCalls != 32 || len(rep.SummaryFailures) == 0 {
		t.Fatalf("calls or failures not reported: %+v", rep)
	}
	// No summary was had: only snips, in either outcome.
	snips := 0
	for _, tr := range rep.Transformations {
		if tr.Step != fit.StepSnip {
			t.Fatalf("a %s transformation without any summary: %+v", tr.Step, tr)
		}
		snips++
	}
	if err == nil {
		if snips == 0 || total(t, nodes) <= rep.TokensAfter || rep.TokensAfter > rep.InputBudget {
			t.Fatalf("fitted without cutting: %+v", rep)
		}
	} else if dnf.Tokens != rep.TokensAfter || dnf.Protected < dnf.Budget {
		t.Fatalf("does not fit, yet not because of protected content: %+v %+v", dnf, rep)
	}
}

// The deadline starts at the first summary call, not before the request
// is measured: even a deadline that is over at once lets one call start
// (which then sees it passed), whatever the machine's load.
func TestDeadlineStartsAtTheFirstCall(t *testing.T) {
	nodes := toolHeavy(20, 30)
	s := &countingSummarizer{sleep: time.Hour}
	opts := options(total(t, nodes)/3, s)
	opts.Deadline = time.Nanosecond
	_, rep, err := fit.Fit(context.Background(), nodes, opts)
	var dnf *fit.DoesNotFitError
	if err != nil && !errors.As(err, &dnf) {
		t.Fatal(err)
	}
	if got := s.calls.Load(); got != 1 || rep.SummaryCalls != 1 {
		t.Fatalf("summarizer called %d times (report %d), want exactly 1", got, rep.SummaryCalls)
	}
}

// snip drops the oldest eligible units, whole, in order, and nothing else.
func TestSnipDropsOldestUnitsInOrder(t *testing.T) {
	nodes := toolHeavy(30, 10)
	out, rep := fitted(t, nodes, options(total(t, nodes)/2, nil))
	pos := map[string]int{}
	for k, n := range nodes {
		pos[n.ID] = k
	}
	dropped := map[string]bool{}
	last := -1
	for _, tr := range rep.Transformations {
		if tr.Step != fit.StepSnip {
			t.Fatalf("no summarizer, yet %s", tr.Step)
		}
		for _, id := range tr.NodeIDs {
			if pos[id] <= last {
				t.Fatalf("snipped %s out of order", id)
			}
			last = pos[id]
			dropped[id] = true
		}
	}
	if len(out)+len(dropped) != len(nodes) {
		t.Fatalf("%d kept + %d snipped != %d", len(out), len(dropped), len(nodes))
	}
	k := 0
	for _, n := range nodes {
		if dropped[n.ID] {
			continue
		}
		if out[k] != n {
			t.Fatalf("kept node %d is %s, want %s", k, out[k].ID, n.ID)
		}
		k++
	}
	// Snipping stops as soon as the request fits: one unit fewer would not.
	lastDrop := rep.Transformations[len(rep.Transformations)-1]
	if rep.TokensAfter+lastDrop.TokensBefore <= rep.InputBudget {
		t.Fatalf("snipped past the budget: %+v", rep)
	}
}

// BenchmarkSnip: a long tool-heavy request cut to half (snip only).
func BenchmarkSnip(b *testing.B) {
	nodes := toolHeavy(2000, 2)
	res, err := estimate.Nodes(context.Background(), nodes, estimate.Options{Window: 1 << 24})
	if err != nil {
		b.Fatal(err)
	}
	opts := fit.Options{Estimate: estimate.Options{Window: res.Total/2 + 100, OutputCap: 100}, Margin: 0}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := fit.Fit(context.Background(), nodes, opts); err != nil {
			b.Fatal(err)
		}
	}
}

// recordingExec stands in for an exec summarizer: it renders the prompt
// a child process would read on stdin, and records it.
type recordingExec struct {
	mu      sync.Mutex
	prompts []string
	key     string
}

func (r *recordingExec) Name() string     { return "exec" }
func (r *recordingExec) CacheKey() string { return r.key }
func (r *recordingExec) Summarize(_ context.Context, req summarize.Request) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.prompts = append(r.prompts, summarize.Prompt(req))
	return "summary of part", nil
}

// A long tool result is chunked and read whole: a marker in the middle of
// a ~30k-token result reaches some summary call.
func TestLongResultReachesTheSummarizerWhole(t *testing.T) {
	const marker = "MARKER-7f3c9a1e-middle-of-the-log"
	var log strings.Builder
	for i := 0; i < 1500; i++ {
		if i == 750 {
			fmt.Fprintf(&log, "%s\n", marker)
		}
		fmt.Fprintf(&log, "=== RUN   TestIntegration/case_%04d\n--- PASS: TestIntegration/case_%04d (0.%02ds)\n", i, i, i%100)
	}
	args, _ := json.Marshal(map[string]string{"cmd": "go test ./..."})
	nodes := []*transcript.Node{
		{ID: "sys", Role: transcript.RoleSystem, Content: transcript.TextContent("You are a build engineer.")},
		{ID: "u1", Role: transcript.RoleUser, Content: transcript.TextContent("Run the suite.")},
		{ID: "a1", Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{{ID: "c1", Name: "bash", Arguments: args}}},
		{ID: "r1", Role: transcript.RoleTool, ToolCallID: "c1", Content: transcript.TextContent(log.String())},
		{ID: "u2", Role: transcript.RoleUser, Content: transcript.TextContent("Summarize the failures.")},
		{ID: "a2", Role: transcript.RoleAssistant, Content: transcript.TextContent("None failed.")},
	}
	if n := total(t, nodes); n < 25000 {
		t.Fatalf("the result is only %d tokens", n)
	}
	s := &recordingExec{key: "exec\x00record"}
	_, rep := fitted(t, nodes, options(2000, s))
	if len(rep.Transformations) == 0 || rep.Transformations[0].Step != fit.StepToolResults {
		t.Fatalf("the result was not summarized: %+v", rep)
	}
	if len(s.prompts) < 2 {
		t.Fatalf("a ~30k-token result went in %d call(s), want several chunks", len(s.prompts))
	}
	found := false
	for _, p := range s.prompts {
		found = found || strings.Contains(p, marker)
		if strings.Contains(p, "bytes clipped") {
			t.Fatalf("a chunk was clipped before it reached the summarizer")
		}
	}
	if !found {
		t.Fatalf("the middle of the result reached no summary call (%d calls)", len(s.prompts))
	}
}

// The cache is keyed by the summarizer's settings: two exec summarizers
// with different commands never share an entry.
func TestCacheKeyedBySummarizerSettings(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	nodes := toolHeavy(4, 60)
	dir := t.TempDir()
	fitWith := func(cmd string) (*fit.Report, []*transcript.Node) {
		opts := options(total(t, nodes)-300, &summarize.Exec{Command: cmd})
		opts.CacheDir = dir
		out, rep := fitted(t, nodes, opts)
		return rep, out
	}
	first, _ := fitWith(`cat >/dev/null; echo "summary from A"`)
	if first.SummaryCalls == 0 || first.CacheHits != 0 {
		t.Fatalf("first fit: %+v", first)
	}
	again, _ := fitWith(`cat >/dev/null; echo "summary from A"`)
	if again.SummaryCalls != 0 || again.CacheHits == 0 {
		t.Fatalf("the same command did not hit the cache: %+v", again)
	}
	other, out := fitWith(`cat >/dev/null; echo "summary from B"`)
	if other.CacheHits != 0 || other.SummaryCalls == 0 {
		t.Fatalf("another command was served the first one's summaries: %+v", other)
	}
	if r0 := byID(out)["r0"].Content.PlainText(); !strings.Contains(r0, "summary from B") {
		t.Fatalf("r0 is %q, want B's summary", r0)
	}
	env := &summarize.Exec{Command: `cat >/dev/null; echo "summary from A"`, Env: []string{"MODEL=other"}}
	if env.CacheKey() == (&summarize.Exec{Command: env.Command}).CacheKey() {
		t.Fatal("the exec environment is not part of the cache key")
	}
}

// The call limit counts provider calls: an openai summarizer that retries
// every 500 never makes more HTTP requests than --max-summary-calls.
func TestCallLimitCountsEveryHTTPAttempt(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":{"message":"overloaded","type":"server_error"}}`)
	}))
	defer srv.Close()
	nodes := toolHeavy(20, 30)
	for _, limit := range []int{1, 3, 7} {
		requests.Store(0)
		s := &summarize.OpenAI{BaseURL: srv.URL, Model: "m", Backoff: time.Microsecond}
		opts := options(total(t, nodes)/3, s)
		opts.MaxCalls = limit
		_, rep, err := fit.Fit(context.Background(), nodes, opts)
		var dnf *fit.DoesNotFitError
		if err != nil && !errors.As(err, &dnf) {
			t.Fatal(err)
		}
		// Each summary retries 4 times; without the limit reaching into
		// the summarizer, a limit of 7 would allow 35 requests.
		if got := int(requests.Load()); got > limit || got == 0 {
			t.Fatalf("limit %d: %d HTTP requests", limit, got)
		}
		if rep.SummaryCalls != int(requests.Load()) {
			t.Fatalf("limit %d: report says %d calls, the server saw %d", limit, rep.SummaryCalls, requests.Load())
		}
	}
}

func TestDeadlineHoldsWithSlowSummarizer(t *testing.T) {
	nodes := toolHeavy(20, 30)
	// A summarizer that would sleep for an hour: the deadline must end the
	// call it is in and stop any further one, whatever the machine's load.
	s := &countingSummarizer{sleep: time.Hour}
	opts := options(total(t, nodes)/3, s)
	opts.Deadline = 50 * time.Millisecond
	_, rep, err := fit.Fit(context.Background(), nodes, opts)
	var dnf *fit.DoesNotFitError
	if err != nil && !errors.As(err, &dnf) {
		t.Fatal(err)
	}
	if got := s.calls.Load(); got != 1 {
		t.Fatalf("summarizer called %d times, want exactly 1 (the one the deadline cut short)", got)
	}
	if rep == nil || rep.SummaryCalls != 1 || len(rep.SummaryFailures) == 0 || !strings.Contains(strings.Join(rep.SummaryFailures, " "), "deadline") {
		t.Fatalf("the deadline is not reported: %+v", rep)
	}
}

func TestCacheMakesRepeatedFitFree(t *testing.T) {
	nodes := toolHeavy(4, 60)
	dir := t.TempDir()
	s := &countingSummarizer{}
	opts := options(total(t, nodes)-300, s)
	opts.CacheDir = dir
	_, first := fitted(t, nodes, opts)
	if first.SummaryCalls == 0 {
		t.Fatal("first fit made no summary call")
	}
	calls := s.calls.Load()
	out2, second := fitted(t, nodes, opts)
	if s.calls.Load() != calls || second.SummaryCalls != 0 || second.CacheHits == 0 {
		t.Fatalf("repeated fit called the summarizer: %d → %d calls, report %+v", calls, s.calls.Load(), second)
	}
	// A cold cache gives the same body.
	opts.CacheDir = ""
	out3, _ := fitted(t, nodes, opts)
	if len(out2) != len(out3) {
		t.Fatalf("cached and uncached fits differ")
	}
	for k := range out2 {
		if encode(t, out2[k]) != encode(t, out3[k]) {
			t.Fatalf("cached and uncached fits differ at %d", k)
		}
	}
}
