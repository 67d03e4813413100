package compact

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/summarize"
	"github.com/ctxfold/ctxfold/transcript"
	"github.com/ctxfold/ctxfold/verify"
)

// fakeClock advances 25ms on every reading.
func fakeClock() func() time.Time {
	t := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(25 * time.Millisecond); return t }
}

func opts(dir string, s summarize.Summarizer, keep int) Options {
	return Options{Dir: dir, Summarizer: s, KeepTokens: keep, Now: fakeClock(), Estimate: estimate.Options{NoCache: true}}
}

// measure is what `ctxfold estimate` reports for the session at HEAD.
func measure(t testing.TB, dir string) int {
	t.Helper()
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	v, err := render.Build(g, "", false)
	if err != nil {
		t.Fatal(err)
	}
	res, err := estimate.View(context.Background(), v, estimate.Options{Model: g.S.Meta.Model, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	return res.Total
}

func renderIDs(t testing.TB, dir string) []string {
	t.Helper()
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	v, err := render.Build(g, "", false)
	if err != nil {
		t.Fatal(err)
	}
	return v.IDs()
}

func TestCompactExtractiveFactsSurvive(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	before := measure(t, dir)
	res, err := Compact(context.Background(), opts(dir, summarize.Extractive{}, 300))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != OutcomeSucceeded {
		t.Fatalf("outcome %s (%s)", res.Outcome, res.Reason)
	}
	// tokens_before / tokens_after are the estimate totals before and after.
	if res.TokensBefore != before || res.TokensAfter != measure(t, dir) || res.TokensAfter >= before {
		t.Fatalf("tokens %d → %d; estimate says %d → %d", res.TokensBefore, res.TokensAfter, before, measure(t, dir))
	}
	n := sessiontest.StoredNode(t, dir, res.SummaryID)
	text := n.Content.PlainText()
	for _, fact := range []string{
		// the first request of the covered turns, verbatim
		`The test TestParseDuration in internal/timeutil/parse_test.go fails on "90m". Find out why and fix it. Do not change the public API of ParseDuration.`,
		// a quoted constraint
		`"Do not change the public API of ParseDuration."`,
		// file paths and identifiers
		"internal/timeutil/parse.go", "## Files changed\n- internal/timeutil/parse.go [a3]\n", "- --- FAIL: TestParseDuration (0.00s) [t1]\n",
	} {
		if !strings.Contains(text, fact) {
			t.Errorf("summary lacks %q:\n%s", fact, text)
		}
	}
	// Every fact audit counts survives, and the result says so per kind.
	if sv := res.Survival; sv == nil || sv.Kept != sv.Total || sv.Total == 0 || sv.Kinds["error"].Total != 3 {
		t.Errorf("survival %+v", sv)
	}
	if !strings.HasPrefix(text, transcript.SummaryPrefix) || n.Name != transcript.SummaryName || n.Predecessor != "sys" {
		t.Fatalf("not a docs/FORMAT.md §4 summary node: %+v", n)
	}
	if got := renderIDs(t, dir); !slices.Equal(got, []string{"sys", res.SummaryID, "u2", "a6", "t5", "t6", "a7"}) {
		t.Fatalf("rendered ids %v", got)
	}
	evs := events(t, dir)
	if !slices.Equal(eventTypes(evs), []string{EventStarted, EventFinished}) {
		t.Fatalf("events %v", eventTypes(evs))
	}
	fin := evs[1]
	for _, k := range []string{"no_op", "summary_id", "summarised_count", "tokens_before", "tokens_after", "raw_history_tokens", "summary_tokens", "compacted_turns", "summarizer", "duration_ms", "at"} {
		if _, ok := fin[k]; !ok {
			t.Errorf("compaction_finished lacks %q: %v", k, fin)
		}
	}
	if fin["no_op"] != false || fin["summary_id"] != res.SummaryID || fin["summarised_count"] != float64(10) ||
		fin["tokens_after"] != float64(res.TokensAfter) || fin["summarizer"] != "extractive" || fin["compacted_turns"] != float64(1) {
		t.Errorf("compaction_finished %v", fin)
	}
	// summary_tokens is the summary node's count in the rendered view,
	// as estimate's node breakdown gives it (the ceiling uses the same).
	if want := viewNodeTokens(t, dir, res.SummaryID); fin["summary_tokens"] != float64(want) || res.SummaryTokens != want {
		t.Errorf("summary_tokens %v (result %d), the summary node counts %d in the view", fin["summary_tokens"], res.SummaryTokens, want)
	}
	if d, _ := fin["duration_ms"].(float64); d <= 0 {
		t.Errorf("duration_ms %v from the injected clock", fin["duration_ms"])
	}
	// HEAD never moves.
	s, _ := store.Open(dir, store.OpenOptions{})
	defer s.Close()
	if s.Meta.Head != "a7" || s.Meta.ActiveSummaryID != res.SummaryID {
		t.Fatalf("meta %+v", s.Meta)
	}
}

func TestCompactNoOpPathsNeverCallTheSummarizer(t *testing.T) {
	ctx := context.Background()
	t.Run("at or below the target", func(t *testing.T) {
		dir := sessiontest.CopyFixture(t, "tools")
		files := snapshotFiles(t, dir)
		res, err := Compact(ctx, opts(dir, mustNotCall{t}, 0))
		if err != nil || res.Outcome != OutcomeNoOp || res.Reason != ReasonBelowTarget {
			t.Fatalf("%v %+v", err, res)
		}
		if snapshotFiles(t, dir) != files {
			t.Fatal("a no-op wrote to the session")
		}
		evs := events(t, dir)
		if !slices.Equal(eventTypes(evs), []string{EventFinished}) || evs[0]["no_op"] != true {
			t.Fatalf("events %v", evs)
		}
	})
	t.Run("nothing new since the last compaction", func(t *testing.T) {
		dir := sessiontest.CopyFixture(t, "tools")
		if res, err := Compact(ctx, opts(dir, summarize.Extractive{}, 300)); err != nil || res.Outcome != OutcomeSucceeded {
			t.Fatalf("%v %+v", err, res)
		}
		files := snapshotFiles(t, dir)
		res, err := Compact(ctx, opts(dir, mustNotCall{t}, 300))
		if err != nil || res.Outcome != OutcomeNoOp || res.Reason != ReasonNothingNew || res.SummarisedCount != 0 {
			t.Fatalf("%v %+v", err, res)
		}
		if snapshotFiles(t, dir) != files {
			t.Fatal("a no-op wrote to the session")
		}
		if got := eventTypes(events(t, dir)); !slices.Equal(got, []string{EventStarted, EventFinished, EventFinished}) {
			t.Fatalf("events %v", got)
		}
	})
	t.Run("below --if-above", func(t *testing.T) {
		dir := sessiontest.CopyFixture(t, "tools")
		o := opts(dir, mustNotCall{t}, 300)
		o.IfAbove = 80
		res, err := Compact(ctx, o)
		if err != nil || res.Outcome != OutcomeNoOp || res.Reason != ReasonBelowThreshold {
			t.Fatalf("%v %+v", err, res)
		}
		if len(events(t, dir)) != 0 {
			t.Fatal("an untriggered compaction wrote an event")
		}
	})
	t.Run("dry run", func(t *testing.T) {
		dir := sessiontest.CopyFixture(t, "tools")
		files := snapshotFiles(t, dir)
		o := opts(dir, mustNotCall{t}, 300)
		res, err := DryRun(ctx, o)
		if err != nil || res.Outcome != OutcomePlanned || !slices.Equal(res.Plan.KeptIDs, []string{"u2", "a6", "t5", "t6", "a7"}) {
			t.Fatalf("%v %+v", err, res)
		}
		if snapshotFiles(t, dir) != files || len(events(t, dir)) != 0 {
			t.Fatal("a dry run wrote")
		}
	})
}

// unchanged asserts a failed compaction wrote no node and left meta alone,
// and that the event log is started + failed.
func unchanged(t *testing.T, dir, files string) map[string]any {
	t.Helper()
	if snapshotFiles(t, dir) != files {
		t.Fatal("a failed compaction changed the history")
	}
	evs := events(t, dir)
	if !slices.Equal(eventTypes(evs), []string{EventStarted, EventFailed}) {
		t.Fatalf("events %v", eventTypes(evs))
	}
	return evs[1]
}

func TestCompactRejectsBadSummaries(t *testing.T) {
	long := strings.Repeat("the quick brown fox jumps over the lazy dog ", 300)
	cases := []struct {
		name string
		s    *stubSummarizer
		max  int
		want error
	}{
		{"empty", &stubSummarizer{text: " \n "}, 0, ErrEmptySummary},
		{"oversized", &stubSummarizer{text: long}, 100, ErrOversized},
		{"non-reducing", &stubSummarizer{text: long}, 10000, ErrNonReducing},
		{"summarizer error", &stubSummarizer{err: errors.New("provider down")}, 0, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := sessiontest.CopyFixture(t, "tools")
			files := snapshotFiles(t, dir)
			o := opts(dir, tc.s, 300)
			o.MaxSummaryTokens = tc.max
			res, err := Compact(context.Background(), o)
			var failed *FailedError
			if !errors.As(err, &failed) || res.Outcome != OutcomeFailed {
				t.Fatalf("want a failed outcome, got %v %+v", err, res)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			ev := unchanged(t, dir, files)
			if ev["error"] != err.Error() {
				t.Fatalf("compaction_failed error %q, want %q", ev["error"], err.Error())
			}
		})
	}
}

func TestCompactCancelled(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	files := snapshotFiles(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &stubSummarizer{text: "never used", fn: func(ctx context.Context) error {
		cancel() // Ctrl-C while the summarizer runs
		<-ctx.Done()
		return ctx.Err()
	}}
	res, err := Compact(ctx, opts(dir, s, 300))
	var failed *FailedError
	if !errors.As(err, &failed) || !errors.Is(err, ErrCancelled) || res.Outcome != OutcomeFailed {
		t.Fatalf("%v %+v", err, res)
	}
	if ev := unchanged(t, dir, files); ev["error"] != "cancelled" {
		t.Fatalf("event %v", ev)
	}
}

func TestCompactChangedUnderneath(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	s := &stubSummarizer{text: "## Objective\nshort", fn: func(context.Context) error {
		// Another writer extends HEAD while the (slow) summarizer runs.
		appendNodes(t, dir, []transcript.Node{{ID: "u9", Role: transcript.RoleUser, Content: transcript.TextContent("one more thing")}})
		return nil
	}}
	res, err := Compact(context.Background(), opts(dir, s, 300))
	var changed *ChangedError
	if !errors.As(err, &changed) || res.Outcome != OutcomeChanged {
		t.Fatalf("%v %+v", err, res)
	}
	st, _ := store.Open(dir, store.OpenOptions{})
	defer st.Close()
	for _, r := range st.All() {
		if r.Summary {
			t.Fatalf("a summary %q was written after the session changed", r.ID)
		}
	}
	if st.Meta.Head != "u9" || st.Meta.ActiveSummaryID != "" {
		t.Fatalf("meta %+v", st.Meta)
	}
	evs := events(t, dir)
	if !slices.Equal(eventTypes(evs), []string{EventStarted, EventFinished}) || evs[1]["no_op"] != true {
		t.Fatalf("events %v", evs)
	}
}

func TestCompactTwiceExtendsCoverage(t *testing.T) {
	ctx := context.Background()
	dir := sessiontest.CopyFixture(t, "tools")
	first, err := Compact(ctx, opts(dir, summarize.Extractive{}, 300))
	if err != nil {
		t.Fatal(err)
	}
	appendNodes(t, dir, []transcript.Node{
		{ID: "u3", Role: transcript.RoleUser, Content: transcript.TextContent("Now make ParseDuration accept \"2h\". Never touch internal/legacy/.")},
		{ID: "a8", Role: transcript.RoleAssistant, Content: transcript.TextContent("Done: \"2h\" parses via time.ParseDuration.")},
		{ID: "u4", Role: transcript.RoleUser, Content: transcript.TextContent("Thanks. Summarize the changes.")},
		{ID: "a9", Role: transcript.RoleAssistant, Content: transcript.TextContent("Fixed 90m, added tests for 0m and -5m, and 2h works.")},
	})
	spy := &stubSummarizer{}
	var second *Result
	spy.fn = func(ctx context.Context) error {
		var err error
		spy.text, err = summarize.Extractive{}.Summarize(ctx, spy.last)
		return err
	}
	second, err = Compact(ctx, opts(dir, spy, 60))
	if err != nil {
		t.Fatal(err)
	}
	// The summarizer read the previous summary plus only the new turns.
	prevText := strings.TrimPrefix(sessiontest.StoredNode(t, dir, first.SummaryID).Content.PlainText(), transcript.SummaryPrefix)
	var got []string
	for _, n := range spy.last.Nodes {
		got = append(got, n.ID)
	}
	if spy.last.Previous != prevText || !slices.Equal(got, []string{"u2", "a6", "t5", "t6", "a7", "u3", "a8"}) {
		t.Fatalf("summarizer input: previous %q, nodes %v", spy.last.Previous, got)
	}
	wantCovers := append(slices.Clone(first.CoversIDs), got...)
	if !slices.Equal(second.CoversIDs, wantCovers) {
		t.Fatalf("covers %v, want %v", second.CoversIDs, wantCovers)
	}
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	i1, _ := g.Lookup(first.SummaryID)
	i2, _ := g.Lookup(second.SummaryID)
	if g.ActiveSummary() != i2 || !g.IsRelic(i1) || g.IsRelic(i2) {
		t.Fatalf("active %d, relic(first)=%v", g.ActiveSummary(), g.IsRelic(i1))
	}
	if ids := renderIDs(t, dir); !slices.Equal(ids, []string{"sys", second.SummaryID, "u4", "a9"}) {
		t.Fatalf("rendered %v", ids)
	}
	text := sessiontest.StoredNode(t, dir, second.SummaryID).Content.PlainText()
	for _, fact := range []string{"TestParseDuration in internal/timeutil/parse_test.go", `"Never touch internal/legacy/."`, "Now make ParseDuration accept"} {
		if !strings.Contains(text, fact) {
			t.Errorf("second summary lost %q:\n%s", fact, text)
		}
	}
}

// TestCompactStoredSessionsKeepAdjacency runs the whole pipeline on
// generated tool-heavy sessions and checks the stored, re-rendered result.
func TestCompactStoredSessionsKeepAdjacency(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	succeeded := 0
	defer func() {
		if !t.Failed() && succeeded < 40 {
			t.Errorf("only %d compactions succeeded; the test exercises too little", succeeded)
		}
	}()
	for s := 0; s < 25; s++ {
		nodes := sessiontest.Generate(r, 4+r.IntN(8))
		dir := newSession(t, "gpt-4o", nodes)
		history := sessiontest.Pointers(nodes)
		for _, keep := range []int{600, 150, 1} { // each re-compaction folds more
			res, err := Compact(context.Background(), opts(dir, summarize.Extractive{}, keep))
			if err != nil {
				t.Fatalf("session %d keep %d: %v", s, keep, err)
			}
			g, err := dag.Open(dir, store.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			v, _ := render.Build(g, "", false)
			view, err := v.LoadNodes()
			g.S.Close()
			if err != nil {
				t.Fatal(err)
			}
			if err := checkAdjacency(view, history); err != nil {
				t.Fatalf("session %d keep %d (%s): %v", s, keep, res.Outcome, err)
			}
			if res.Outcome == OutcomeSucceeded {
				succeeded++
			}
			// The tail starts at a request, or, inside a long latest turn,
			// at a response right after tool results (docs/COMPACT.md §2).
			if res.Outcome == OutcomeSucceeded && (view[1].ID != res.SummaryID || !(view[2].IsTurnStart() || res.Plan.WithinTurn && view[2].Role == transcript.RoleAssistant)) {
				t.Fatalf("session %d keep %d: rendered %v", s, keep, v.IDs())
			}
			// The verifier passes the compacted session: tool adjacency,
			// the summary's shape and coverage, the event log.
			vr, err := verify.Dir(context.Background(), dir, store.OpenOptions{}, verify.Options{}, func(f verify.Finding) {
				if f.Severity == verify.Error {
					t.Errorf("session %d keep %d: verify: %s %s", s, keep, f.Code, f)
				}
			})
			if err != nil || !vr.OK() {
				t.Fatalf("session %d keep %d: verify: %v %+v", s, keep, err, vr)
			}
		}
	}
}

// viewNodeTokens is estimate's count of one node of the view at HEAD.
func viewNodeTokens(t testing.TB, dir, id string) int {
	t.Helper()
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	v, err := render.Build(g, "", false)
	if err != nil {
		t.Fatal(err)
	}
	res, err := estimate.View(context.Background(), v, estimate.Options{Model: g.S.Meta.Model, NodeDetail: true, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, nc := range res.Nodes {
		if nc.ID == id {
			return nc.Tokens
		}
	}
	t.Fatalf("%s is not in the view", id)
	return 0
}

// The size ceiling applies to the summary node's count in the view (its
// prefix and message overhead included), the same figure the event
// records: a text just under the ceiling by itself is over it as a node.
func TestCompactCeilingIsTheNodeCount(t *testing.T) {
	text := strings.TrimSpace(strings.Repeat("word ", 297))
	bare, err := estimate.Text(estimate.O200kBase, text)
	if err != nil {
		t.Fatal(err)
	}
	dir := sessiontest.CopyFixture(t, "tools")
	o := opts(dir, &stubSummarizer{text: text}, 300)
	o.MaxSummaryTokens = bare
	_, err = Compact(context.Background(), o)
	if !errors.Is(err, ErrOversized) {
		t.Fatalf("a %d-token text under a %d-token ceiling: got %v, want the node over the ceiling", bare, bare, err)
	}
}

// fillingSummarizer returns a text of exactly the budget it is given.
type fillingSummarizer struct{ t *testing.T }

func (fillingSummarizer) Name() string     { return "filling" }
func (fillingSummarizer) CacheKey() string { return "filling" }
func (f fillingSummarizer) Summarize(_ context.Context, req summarize.Request) (string, error) {
	text := strings.TrimSpace(strings.Repeat("word ", req.MaxTokens))
	if n, err := estimate.Text(estimate.O200kBase, text); err != nil || n != req.MaxTokens {
		f.t.Fatalf("%d-token filler for a %d budget (%v)", n, req.MaxTokens, err)
	}
	return text, nil
}

// A summarizer that uses its whole budget is accepted: the budget it is
// handed leaves room for the node's prefix and overhead under the ceiling.
func TestSummaryBudgetLeavesRoomForTheNode(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "long")
	o := opts(dir, fillingSummarizer{t}, 300)
	o.MaxSummaryTokens = 150
	res, err := Compact(context.Background(), o)
	if err != nil || res.Outcome != OutcomeSucceeded || res.SummaryTokens > 150 {
		t.Fatalf("%v %+v", err, res)
	}
}
