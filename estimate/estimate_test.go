package estimate

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

func openView(t *testing.T, dir, head string, raw bool) *render.View {
	t.Helper()
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.S.Close() })
	v, err := render.Build(g, head, raw)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func sumCategories(r *Result) int {
	n := 0
	for _, v := range r.Categories {
		n += v
	}
	return n
}

func TestViewEqualsNodesAndCategoriesSum(t *testing.T) {
	for _, fx := range []string{"tools", "fork", "compacted"} {
		for _, model := range []string{"gpt-4o", "gpt-4", "claude-sonnet-4", "gemini-2.5-pro"} {
			dir := sessiontest.CopyFixture(t, fx)
			v := openView(t, dir, "", false)
			opts := Options{Model: model, NodeDetail: true, NoCalibrate: true}
			got, err := View(context.Background(), v, opts)
			if err != nil {
				t.Fatal(err)
			}
			nodes, err := v.LoadNodes()
			if err != nil {
				t.Fatal(err)
			}
			want, err := Nodes(context.Background(), nodes, opts)
			if err != nil {
				t.Fatal(err)
			}
			if got.Total != want.Total || !reflect.DeepEqual(got.Categories, want.Categories) || !reflect.DeepEqual(got.Nodes, want.Nodes) {
				t.Errorf("%s/%s: View %d %v, Nodes %d %v", fx, model, got.Total, got.Categories, want.Total, want.Categories)
			}
			if s := sumCategories(got); s != got.Total || got.Total == 0 {
				t.Errorf("%s/%s: categories sum to %d, total %d", fx, model, s, got.Total)
			}
			perNode := 0
			for _, n := range got.Nodes {
				perNode += n.Tokens
			}
			if perNode+replyPriming != got.Total {
				t.Errorf("%s/%s: node tokens sum to %d + priming %d, total %d", fx, model, perNode, replyPriming, got.Total)
			}
		}
	}
}

// TestCategoriesAreExactCounts checks the breakdown of fixtures/tools
// against counts taken independently with Text.
func TestCategoriesAreExactCounts(t *testing.T) {
	v := openView(t, sessiontest.CopyFixture(t, "tools"), "", false)
	nodes, err := v.LoadNodes()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	messages, calls := 0, 0
	count := func(cat, s string) {
		n, err := Text(O200kBase, s)
		if err != nil {
			t.Fatal(err)
		}
		want[cat] += n
	}
	for _, n := range nodes {
		messages++
		switch n.Role {
		case transcript.RoleSystem:
			count(CatSystem, n.Content.PlainText())
		case transcript.RoleUser:
			count(CatUser, n.Content.PlainText())
		case transcript.RoleTool:
			count(CatToolResults, n.Content.PlainText())
		case transcript.RoleAssistant:
			count(CatAssistant, n.Content.PlainText())
			for _, b := range n.Content.Blocks {
				if b.Type == transcript.BlockThinking {
					count(CatThinking, b.Text)
				}
			}
			for _, c := range n.AllToolCalls() {
				calls++
				count(CatToolCalls, c.Name)
				count(CatToolCalls, c.ArgumentsText())
			}
		}
	}
	want[CatOverhead] = messages*perMessage + calls*perToolCall + replyPriming
	res, err := Nodes(context.Background(), nodes, Options{Model: "gpt-4o"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range Categories {
		if res.Categories[c] != want[c] {
			t.Errorf("category %s: got %d, want %d", c, res.Categories[c], want[c])
		}
	}
	if want[CatThinking] == 0 || want[CatToolCalls] == 0 || want[CatToolResults] == 0 {
		t.Fatal("fixture lost its thinking/tool blocks; the test would prove nothing")
	}
}

// TestCompactedCountsSummaryNotCovered: the estimate of a compacted
// session is the rendered view — the active summary, not what it covers.
func TestCompactedCountsSummaryNotCovered(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "compacted")
	v := openView(t, dir, "", false)
	if !v.Summarized() {
		t.Fatal("fixture's view is not summarized")
	}
	res, err := View(context.Background(), v, Options{Model: "gpt-4.1", NodeDetail: true})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, n := range res.Nodes {
		ids = append(ids, n.ID)
	}
	if !reflect.DeepEqual(ids, v.IDs()) {
		t.Fatalf("counted %v, view is %v", ids, v.IDs())
	}
	s, err := v.Graph.S.NodeByID("summary_second")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Text(O200kBase, s.Content.PlainText())
	if res.Categories[CatSummary] != want {
		t.Errorf("summary category %d, want the active summary's %d", res.Categories[CatSummary], want)
	}
	raw, err := View(context.Background(), openView(t, dir, "", true), Options{Model: "gpt-4.1"})
	if err != nil {
		t.Fatal(err)
	}
	if raw.Categories[CatSummary] != 0 || raw.Total <= res.Total {
		t.Errorf("raw view: summary %d, total %d; folded total %d", raw.Categories[CatSummary], raw.Total, res.Total)
	}
}

func TestBudgetEdgeWindows(t *testing.T) {
	cases := []struct {
		name                   string
		opts                   Options
		window, reserve, input int
		proxy                  bool
	}{
		{"8k gpt-4", Options{Model: "gpt-4"}, 8192, 2048, 6144, false},
		{"8k override", Options{Model: "gpt-4o", Window: 8000}, 8000, 2000, 6000, false},
		{"128k gpt-4o", Options{Model: "gpt-4o"}, 128000, 16384, 111616, false},
		{"128k small max output", Options{Model: "gpt-4-turbo"}, 128000, 4096, 123904, false},
		{"200k claude 3.5", Options{Model: "claude-3-5-sonnet-20241022"}, 200000, 8192, 191808, true},
		{"200k claude 4", Options{Model: "claude-sonnet-4"}, 200000, 16384, 183616, true},
		{"1M override", Options{Model: "claude-sonnet-4", Window: 1000000}, 1000000, 16384, 983616, true},
		{"1M gpt-4.1", Options{Model: "gpt-4.1-2025-04-14"}, 1047576, 16384, 1031192, false},
		{"1M gemini max-output", Options{Model: "gemini-2.5-pro", MaxOutput: 2000}, 1048576, 2000, 1046576, true},
		{"explicit cap", Options{Model: "gpt-4o", OutputCap: 50000}, 128000, 50000, 78000, false},
		{"unknown with window", Options{Model: "my-local-model", Window: 32768}, 32768, 8192, 24576, true},
		{"wrong encoding is a proxy", Options{Model: "gpt-4o", Encoding: Cl100kBase}, 128000, 16384, 111616, true},
	}
	for _, c := range cases {
		b, err := Budget(c.opts)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if b.Window != c.window || b.OutputReserve != c.reserve || b.InputBudget != c.input || b.EncodingIsProxy != c.proxy {
			t.Errorf("%s: got window %d reserve %d input %d proxy %v; want %d %d %d %v", c.name,
				b.Window, b.OutputReserve, b.InputBudget, b.EncodingIsProxy, c.window, c.reserve, c.input, c.proxy)
		}
	}
	if _, err := Budget(Options{Model: "gpt-4o", Window: 8000, OutputCap: 8000}); err == nil {
		t.Error("a cap filling the window must be an error")
	}
}

func TestUnknownModel(t *testing.T) {
	_, err := Budget(Options{Model: "gpt-4x"})
	var um *UnknownModelError
	if !errors.As(err, &um) {
		t.Fatalf("got %v, want *UnknownModelError", err)
	}
	if len(um.Closest) == 0 || !strings.HasPrefix(um.Closest[0], "gpt-4") {
		t.Errorf("closest %v", um.Closest)
	}
	if !strings.Contains(err.Error(), `unknown model "gpt-4x"; closest known: gpt-4`) {
		t.Errorf("message %q", err)
	}
	// The config's models: extends the table.
	b, err := Budget(Options{Model: "gpt-4x", Models: map[string]Model{"gpt-4x": {Window: 64000, MaxOutput: 4000, Encoding: Cl100kBase, Provider: ProviderOpenAI}}})
	if err != nil || b.Window != 64000 || b.OutputReserve != 4000 || b.Encoding != Cl100kBase || b.EncodingIsProxy {
		t.Errorf("config model: %+v %v", b, err)
	}
	// …and overrides it.
	b, err = Budget(Options{Model: "gpt-4o", Models: map[string]Model{"GPT-4o": {Window: 64000, Encoding: O200kBase}}})
	if err != nil || b.Window != 64000 {
		t.Errorf("override: %+v %v", b, err)
	}
}

func TestShouldCompactThreshold(t *testing.T) {
	nodes := []*transcript.Node{{ID: "u", Role: transcript.RoleUser, Content: transcript.TextContent(strings.Repeat("word ", 500))}}
	res, err := Nodes(context.Background(), nodes, Options{Model: "gpt-4o"})
	if err != nil {
		t.Fatal(err)
	}
	total := res.Total
	// A window whose input budget is exactly total/0.8 puts budget_pct at 80.
	for _, c := range []struct {
		budget int
		want   bool
	}{{total * 5 / 4, true}, {total*5/4 + 10, false}} {
		w := c.budget * 4 / 3 // reserve = window/4 when max output is larger
		w -= w % 4
		res, err := Nodes(context.Background(), nodes, Options{Model: "gpt-4o", Window: w, OutputCap: w - c.budget})
		if err != nil {
			t.Fatal(err)
		}
		if res.ShouldCompact != c.want {
			t.Errorf("budget %d (pct %.2f): should_compact %v, want %v", c.budget, res.BudgetPct, res.ShouldCompact, c.want)
		}
		if math.Abs(res.Ratio-float64(total)/float64(w)) > 1e-12 {
			t.Errorf("ratio %v", res.Ratio)
		}
	}
}

// estimateSent estimates a request independently of calibrate: render the
// view from the node's predecessor, then count it with Nodes.
func estimateSent(t *testing.T, dir, pred string, raw bool, model string) int {
	v := openView(t, dir, pred, raw)
	nodes, err := v.LoadNodes()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Nodes(context.Background(), nodes, Options{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	return r.Total
}

func TestCalibrationArithmetic(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	v := openView(t, dir, "", false)
	res, err := View(context.Background(), v, Options{Model: "gpt-4o"})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Calibration
	if c == nil {
		t.Fatal("no calibration on a fixture with recorded usage")
	}
	type req struct {
		id, pred string
		measured int
	}
	reqs := []req{{"a1", "u1", 210}, {"a2", "t1", 330}, {"a3", "t2", 520}, {"a4", "t3", 610}, {"a5", "t4", 680}, {"a6", "u2", 760}, {"a7", "t6", 850}}
	var rels []float64
	worst := 0.0
	for _, r := range reqs {
		est := estimateSent(t, dir, r.pred, false, "gpt-4o")
		rel := float64(est-r.measured) / float64(r.measured)
		rels = append(rels, math.Abs(rel))
		if math.Abs(rel) > math.Abs(worst) {
			worst = rel
		}
	}
	sort.Float64s(rels)
	last := estimateSent(t, dir, "t6", false, "gpt-4o")
	ratio := 850 / float64(last)
	if c.Requests != 7 || c.LatestNode != "a7" || c.Measured != 850 || c.Estimated != last {
		t.Errorf("calibration %+v; want 7 requests, latest a7 850/%d", c, last)
	}
	detail, err := View(context.Background(), v, Options{Model: "gpt-4o", NodeDetail: true})
	if err != nil {
		t.Fatal(err)
	}
	h := detail.Calibration.History
	if len(h) != 7 || h[0].Node != "a1" || h[0].Measured != 210 || h[6].Estimated != last || h[6].Framing <= 0 {
		t.Fatalf("history %+v", h)
	}
	// The calibrated total is exact at the latest request and moves by the
	// slope from there, plus the framing rate on the framing added since
	// (docs/ESTIMATE.md, "Calibration").
	framed := int(math.Round(c.FramingRate * float64(res.Categories[CatOverhead]-h[6].Framing)))
	want := int(math.Round(850 + c.Slope*float64(res.Total-last) + c.FramingRate*float64(res.Categories[CatOverhead]-h[6].Framing)))
	if math.Abs(c.Ratio-ratio) > 1e-12 || c.CalibratedTotal != want || c.FramingTokens != framed || c.UnrecordedTokens != int(math.Round(850-c.Slope*float64(last))) {
		t.Errorf("ratio %v calibrated %d unrecorded %d framing %d; want %v %d framing %d", c.Ratio, c.CalibratedTotal, c.UnrecordedTokens, c.FramingTokens, ratio, want, framed)
	}
	if (c.Method == MethodFraming) != (c.FramingRate > 0) || res.BudgetBasis != BasisCalibrated ||
		math.Abs(res.BudgetPct-c.CalibratedBudgetPct) > 1e-9 || math.Abs(res.RawBudgetPct-100*float64(res.Total)/float64(res.InputBudget)) > 1e-9 {
		t.Errorf("method %q rate %v basis %q budget %v raw %v calibrated %v", c.Method, c.FramingRate, res.BudgetBasis, res.BudgetPct, res.RawBudgetPct, c.CalibratedBudgetPct)
	}
	// The correction carries its parts rounded: within a token of each.
	if got := c.Correction().Apply(res.Total); got < c.CalibratedTotal-2 || got > c.CalibratedTotal+2 {
		t.Errorf("the correction applied to the view it was fitted on: %d, want %d", got, c.CalibratedTotal)
	}
	if math.Abs(c.MedianRelError-rels[3]) > 1e-12 || math.Abs(c.WorstRelError-worst) > 1e-12 {
		t.Errorf("median %v worst %v; want %v %v", c.MedianRelError, c.WorstRelError, rels[3], worst)
	}
	off, err := View(context.Background(), v, Options{Model: "gpt-4o", NoCalibrate: true})
	if err != nil || off.Calibration != nil || off.BudgetBasis != BasisRaw || off.BudgetPct != off.RawBudgetPct {
		t.Errorf("NoCalibrate: %+v %v", off.Calibration, err)
	}
}

// TestCalibrationHonoursSummaryOrder: a request sent after a summary was
// written reads the summary; one sent before reads the raw spine, even
// though the summary is active now.
func TestCalibrationHonoursSummaryOrder(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "compacted")
	nodesPath := filepath.Join(dir, store.NodesFile)
	data, err := os.ReadFile(nodesPath)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if m["id"] == "a8" {
			m["usage"] = map[string]any{"input_tokens": 900, "output_tokens": 10}
			b, _ := json.Marshal(m)
			l = string(b)
		}
		lines = append(lines, l)
	}
	lines = append(lines,
		`{"id":"u5","predecessor":"a8","role":"user","content":"And the least revenue?"}`,
		`{"id":"a9","predecessor":"u5","role":"assistant","content":"APAC, 0.2M.","usage":{"input_tokens":300,"output_tokens":8}}`)
	if err := os.WriteFile(nodesPath, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	mdata, _ := os.ReadFile(filepath.Join(dir, store.MetaFile))
	_ = json.Unmarshal(mdata, &meta)
	delete(meta, "nodes_bytes") // hand-edited: every complete line counts
	meta["head"] = "a9"
	mdata, _ = json.Marshal(meta)
	if err := os.WriteFile(filepath.Join(dir, store.MetaFile), mdata, 0o644); err != nil {
		t.Fatal(err)
	}
	v := openView(t, dir, "", false)
	res, err := View(context.Background(), v, Options{Model: "gpt-4.1"})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Calibration
	a8 := estimateSent(t, dir, "u4", true, "gpt-4.1")  // summaries written after a8
	a9 := estimateSent(t, dir, "u5", false, "gpt-4.1") // summary_second in force
	if a9 >= a8 {
		t.Fatalf("test setup: folded %d should be below raw %d", a9, a8)
	}
	if c == nil || c.Requests != 2 || c.LatestNode != "a9" || c.Estimated != a9 {
		t.Fatalf("calibration %+v; want 2 requests, latest a9 estimated %d", c, a9)
	}
	r8, r9 := float64(a8-900)/900, float64(a9-300)/300
	worst := r8
	if math.Abs(r9) > math.Abs(r8) {
		worst = r9
	}
	if math.Abs(c.WorstRelError-worst) > 1e-12 || math.Abs(c.MedianRelError-(math.Abs(r8)+math.Abs(r9))/2) > 1e-12 {
		t.Errorf("errors %+v; want worst %v, median %v", c, worst, (math.Abs(r8)+math.Abs(r9))/2)
	}
}

func TestCacheWarmRunDoesNoBPE(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	opts := Options{Model: "gpt-4o", NodeDetail: true}
	before := bpeNodes.Load()
	cold, err := View(context.Background(), openView(t, dir, "", false), opts)
	if err != nil {
		t.Fatal(err)
	}
	if n := bpeNodes.Load() - before; n != 16 {
		t.Fatalf("cold run tokenized %d nodes, want 16", n)
	}
	if _, err := os.Stat(CachePath(dir, CacheFile)); err != nil {
		t.Fatalf("no cache written: %v", err)
	}
	before = bpeNodes.Load()
	warm, err := View(context.Background(), openView(t, dir, "", false), opts)
	if err != nil {
		t.Fatal(err)
	}
	if n := bpeNodes.Load() - before; n != 0 {
		t.Errorf("warm run tokenized %d nodes, want 0", n)
	}
	if !reflect.DeepEqual(cold, warm) {
		t.Errorf("warm result differs:\n%+v\n%+v", cold, warm)
	}
	// Another encoding is a different key: counted afresh, both kept.
	before = bpeNodes.Load()
	if _, err := View(context.Background(), openView(t, dir, "", false), Options{Model: "gpt-4"}); err != nil {
		t.Fatal(err)
	}
	if n := bpeNodes.Load() - before; n != 16 {
		t.Errorf("cl100k run tokenized %d nodes, want 16", n)
	}
	before = bpeNodes.Load()
	if _, err := View(context.Background(), openView(t, dir, "", false), opts); err != nil {
		t.Fatal(err)
	}
	if n := bpeNodes.Load() - before; n != 0 {
		t.Errorf("o200k entries were lost: %d recounted", n)
	}
}

func TestCacheAfterAppendCountsOnlyNewNodes(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	opts := Options{Model: "gpt-4o"}
	if _, err := View(context.Background(), openView(t, dir, "", false), opts); err != nil {
		t.Fatal(err)
	}
	_, err := store.Update(context.Background(), dir, store.WriteOptions{}, func(tx *store.Tx) error {
		_, err := tx.Append([]transcript.Node{
			{ID: "u3", Role: transcript.RoleUser, Content: transcript.TextContent("Thanks, commit it.")},
			{ID: "a8", Role: transcript.RoleAssistant, Content: transcript.TextContent("Committed.")},
		}, store.AppendOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	before := bpeNodes.Load()
	if _, err := View(context.Background(), openView(t, dir, "", false), opts); err != nil {
		t.Fatal(err)
	}
	if n := bpeNodes.Load() - before; n != 2 {
		t.Errorf("after appending 2 nodes, %d were tokenized", n)
	}
}

func TestCacheChangedDeletedCorrupt(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	opts := Options{Model: "gpt-4o", NoCalibrate: true}
	first, err := View(context.Background(), openView(t, dir, "", false), opts)
	if err != nil {
		t.Fatal(err)
	}
	cachePath := CachePath(dir, CacheFile)

	// A changed node is recounted (a hand-edited session).
	nodesPath := filepath.Join(dir, store.NodesFile)
	data, _ := os.ReadFile(nodesPath)
	edited := strings.Replace(string(data), `"Great. Also add a test`, `"Great, thanks. Also add one more test`, 1)
	if edited == string(data) {
		t.Fatal("edit did not apply")
	}
	os.WriteFile(nodesPath, []byte(edited), 0o644)
	var meta map[string]any
	mdata, _ := os.ReadFile(filepath.Join(dir, store.MetaFile))
	json.Unmarshal(mdata, &meta)
	delete(meta, "nodes_bytes")
	mdata, _ = json.Marshal(meta)
	os.WriteFile(filepath.Join(dir, store.MetaFile), mdata, 0o644)
	before := bpeNodes.Load()
	changed, err := View(context.Background(), openView(t, dir, "", false), opts)
	if err != nil {
		t.Fatal(err)
	}
	if n := bpeNodes.Load() - before; n != 1 {
		t.Errorf("changed node: %d tokenized, want 1", n)
	}
	if changed.Total <= first.Total {
		t.Errorf("longer node, total %d, before %d", changed.Total, first.Total)
	}

	// A deleted cache is rebuilt.
	os.Remove(cachePath)
	before = bpeNodes.Load()
	rebuilt, err := View(context.Background(), openView(t, dir, "", false), opts)
	if err != nil {
		t.Fatal(err)
	}
	if n := bpeNodes.Load() - before; n != 16 || rebuilt.Total != changed.Total {
		t.Errorf("deleted cache: %d tokenized, total %d (want 16, %d)", n, rebuilt.Total, changed.Total)
	}
	if _, err := os.Stat(cachePath); err != nil {
		t.Errorf("cache not rebuilt: %v", err)
	}

	// A corrupt cache is ignored with a warning, and rewritten.
	for name, corrupt := range map[string]func([]byte) []byte{
		"flipped byte": func(b []byte) []byte { b[len(b)/2] ^= 0xff; return b },
		"truncated":    func(b []byte) []byte { return b[:len(b)-7] },
		"garbage":      func([]byte) []byte { return []byte("not a cache at all") },
	} {
		good, _ := os.ReadFile(cachePath)
		os.WriteFile(cachePath, corrupt(append([]byte(nil), good...)), 0o644)
		var warnings []string
		o := opts
		o.Warn = func(m string) { warnings = append(warnings, m) }
		got, err := View(context.Background(), openView(t, dir, "", false), o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.Total != changed.Total {
			t.Errorf("%s: total %d, want %d", name, got.Total, changed.Total)
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], "ignored") {
			t.Errorf("%s: warnings %q", name, warnings)
		}
		before = bpeNodes.Load()
		if _, err := View(context.Background(), openView(t, dir, "", false), o); err != nil {
			t.Fatal(err)
		}
		if n := bpeNodes.Load() - before; n != 0 || len(warnings) != 1 {
			t.Errorf("%s: cache not rewritten (%d tokenized, warnings %q)", name, n, warnings)
		}
	}
}

func TestPerNodeCountsCoveredNodes(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "compacted")
	v := openView(t, dir, "", false)
	s := v.Graph.S
	all := make([]int, s.Len())
	for i := range all {
		all[i] = i
	}
	got, err := PerNode(context.Background(), s, all, Options{Model: "gpt-4.1"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := View(context.Background(), v, Options{Model: "gpt-4.1", NodeDetail: true, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]NodeCount{}
	for _, n := range got {
		byID[n.ID] = n
	}
	for _, n := range res.Nodes {
		if byID[n.ID] != n {
			t.Errorf("PerNode %+v, View %+v", byID[n.ID], n)
		}
	}
	u2 := byID["u2"] // covered by the active summary: still counted
	want, _ := Text(O200kBase, "Now copy the data and check the row count.")
	if u2.ContentTokens != want || u2.Tokens != want+perMessage || u2.Category != CatUser {
		t.Errorf("covered u2: %+v, want %d content tokens", u2, want)
	}
}

func TestToolDefinitionsAndImages(t *testing.T) {
	tools := json.RawMessage(`[{"type":"function","function":{"name":"get_weather","description":"Get the weather.","parameters":{"type":"object","properties":{"city":{"type":"string","description":"City name."},"unit":{"type":"string","description":"Unit","enum":["c","f"]}}}}}]`)
	sys := &transcript.Node{ID: "s", Role: transcript.RoleSystem, Content: transcript.TextContent("Be brief."), Metadata: map[string]json.RawMessage{"tools": tools}}
	img := &transcript.Node{ID: "u", Role: transcript.RoleUser, Content: transcript.Content{IsBlocks: true, Blocks: []transcript.Block{
		{Type: transcript.BlockImage, Source: "https://example.invalid/a.png", Extra: map[string]json.RawMessage{"width": json.RawMessage("1024"), "height": json.RawMessage("1024")}},
		{Type: transcript.BlockImage, Source: "b.png"},
	}}}
	res, err := Nodes(context.Background(), []*transcript.Node{sys, img}, Options{Model: "gpt-4o"})
	if err != nil {
		t.Fatal(err)
	}
	// Cookbook rule by hand: 7 + "get_weather:Get the weather" + 3 (props)
	// + 3 + "city:string:City name" + 3 − 3 + (3+"c") + (3+"f") + "unit:string:Unit" + 12.
	c := func(s string) int { n, _ := Text(O200kBase, s); return n }
	wantTools := 7 + c("get_weather:Get the weather") + 3 + 3 + c("city:string:City name") + 3 - 3 + 3 + c("c") + 3 + c("f") + c("unit:string:Unit") + 12
	if res.Categories[CatTools] != wantTools {
		t.Errorf("tool definitions %d, want %d", res.Categories[CatTools], wantTools)
	}
	// 1024×1024 high detail: 768×768 → 4 tiles → 765; unknown size: 765.
	if res.Categories[CatImages] != 765*2 {
		t.Errorf("images %d, want %d", res.Categories[CatImages], 765*2)
	}
	claude, err := Nodes(context.Background(), []*transcript.Node{sys, img}, Options{Model: "claude-sonnet-4"})
	if err != nil {
		t.Fatal(err)
	}
	// Anthropic: 1024×1024/750 → 1399; unknown → 1600; tool preamble 346.
	if claude.Categories[CatImages] != 1399+1600 || claude.Categories[CatOverhead] != 2*perMessage+replyPriming+anthropicToolPreamble {
		t.Errorf("claude images %d overhead %d", claude.Categories[CatImages], claude.Categories[CatOverhead])
	}
}

func TestNoModelCountsWithoutBudget(t *testing.T) {
	nodes := []*transcript.Node{{ID: "u", Role: transcript.RoleUser, Content: transcript.TextContent("hello world")}}
	res, err := Nodes(context.Background(), nodes, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 2+perMessage+replyPriming || res.Window != 0 || res.ShouldCompact {
		t.Errorf("%+v", res)
	}
	if _, err := Nodes(context.Background(), nodes, Options{Model: "nope-7b"}); err == nil {
		t.Error("an unknown model must be an error")
	}
}

func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	nodes := make([]*transcript.Node, 100)
	for i := range nodes {
		nodes[i] = &transcript.Node{ID: "n", Role: transcript.RoleUser, Content: transcript.TextContent("x")}
	}
	if _, err := Nodes(ctx, nodes, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

// TestViewCacheKey: the stored Result is served only for the same session
// state and inputs. A compaction changes session.json without moving HEAD
// (docs/ESTIMATE.md), which must be a miss.
func TestViewCacheKey(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "compacted")
	opts := Options{Model: "gpt-4.1"}
	key, err := ViewCacheKey(dir, opts, "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := View(context.Background(), openView(t, dir, "", false), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := StoreView(dir, key, res); err != nil {
		t.Fatal(err)
	}
	if got, ok := CachedView(dir, key); !ok || !reflect.DeepEqual(got, res) {
		t.Fatalf("hit %v, result %+v", ok, got)
	}
	for name, o := range map[string]Options{"model": {Model: "gpt-4o"}, "window": {Model: "gpt-4.1", Window: 9000}, "nodes": {Model: "gpt-4.1", NodeDetail: true}} {
		k, _ := ViewCacheKey(dir, o, "")
		if _, ok := CachedView(dir, k); ok {
			t.Errorf("%s: different inputs served the stored result", name)
		}
	}
	if k, _ := ViewCacheKey(dir, opts, "a4x"); k == key {
		t.Error("--head not in the key")
	}
	// A compaction that leaves HEAD where it was: session.json changes.
	metaPath := filepath.Join(dir, store.MetaFile)
	meta, _ := os.ReadFile(metaPath)
	os.WriteFile(metaPath, []byte(strings.Replace(string(meta), `"summary_second"`, `"summary_first"`, 1)), 0o644)
	if k, _ := ViewCacheKey(dir, opts, ""); k == key {
		t.Error("a new active summary (HEAD unchanged) kept the key")
	}
	os.WriteFile(metaPath, meta, 0o644)
	if k, _ := ViewCacheKey(dir, opts, ""); k != key {
		t.Error("the key is not a function of the session state")
	}
	// An append changes it too.
	_, err = store.Update(context.Background(), dir, store.WriteOptions{}, func(tx *store.Tx) error {
		_, err := tx.Append([]transcript.Node{{ID: "u9", Role: transcript.RoleUser, Content: transcript.TextContent("more")}}, store.AppendOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := ViewCacheKey(dir, opts, ""); k == key {
		t.Error("an append kept the key")
	}
	os.WriteFile(CachePath(dir, ViewCacheFile), []byte("{not json"), 0o644)
	if _, ok := CachedView(dir, key); ok {
		t.Error("a corrupt view cache was served")
	}
}

// TestConcurrentRunsShareTheCache: runs racing on one session's cache all
// agree and leave a valid cache (each replaces it atomically).
func TestConcurrentRunsShareTheCache(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	opts := Options{Model: "gpt-4o", NodeDetail: true}
	want, err := View(context.Background(), openView(t, dir, "", false), Options{Model: "gpt-4o", NodeDetail: true, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(CachePath(dir, CacheFile))
	views := make([]*render.View, 8)
	for i := range views {
		views[i] = openView(t, dir, "", false)
	}
	results := make([]*Result, len(views))
	errs := make([]error, len(views))
	var warnings atomicStrings
	done := make(chan int)
	for i := range views {
		go func() {
			o := opts
			o.Warn = warnings.add
			results[i], errs[i] = View(context.Background(), views[i], o)
			done <- i
		}()
	}
	for range views {
		<-done
	}
	for i := range views {
		if errs[i] != nil || !reflect.DeepEqual(results[i], want) {
			t.Errorf("run %d: %v\n%+v\nwant %+v", i, errs[i], results[i], want)
		}
	}
	if w := warnings.get(); len(w) > 0 {
		t.Errorf("warnings: %q", w)
	}
	before := bpeNodes.Load()
	var w2 []string
	o := opts
	o.Warn = func(m string) { w2 = append(w2, m) }
	if _, err := View(context.Background(), openView(t, dir, "", false), o); err != nil {
		t.Fatal(err)
	}
	if n := bpeNodes.Load() - before; n != 0 || len(w2) != 0 {
		t.Errorf("after the race: %d nodes recounted, warnings %q", n, w2)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
}

type atomicStrings struct {
	mu sync.Mutex
	s  []string
}

func (a *atomicStrings) add(m string) { a.mu.Lock(); a.s = append(a.s, m); a.mu.Unlock() }
func (a *atomicStrings) get() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.s...)
}

// Entries are positional: a run that reads one branch keeps the entries of
// the other branch's nodes, and entries never written (nodes no run has
// read yet) are plain misses, not damage.
func TestCacheKeepsEntriesOfNodesOffTheView(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "fork")
	var warnings []string
	opts := Options{Model: "gpt-4o", NoCalibrate: true, Warn: func(m string) { warnings = append(warnings, m) }}
	run := func(head string, wantBPE int64) {
		t.Helper()
		before := bpeNodes.Load()
		if _, err := View(context.Background(), openView(t, dir, head, false), opts); err != nil {
			t.Fatal(err)
		}
		if n := bpeNodes.Load() - before; n != wantBPE {
			t.Errorf("head %s: %d nodes tokenized, want %d", head, n, wantBPE)
		}
	}
	run("a2", 5)  // sys u1 a1 u2 a2
	run("a2b", 3) // a1b u2b a2b; sys and u1 from the cache
	run("a2", 0)  // a1 u2 a2 kept through the a2b run
	run("a2b", 0)
	if len(warnings) > 0 {
		t.Errorf("warnings: %q", warnings)
	}

	// An earlier version's file is replaced without a warning.
	os.WriteFile(CachePath(dir, CacheFile), append([]byte("CTXFEST1"), make([]byte, 60)...), 0o644)
	run("a2", 5)
	if len(warnings) > 0 {
		t.Errorf("old cache version: warnings %q", warnings)
	}
	run("a2", 0)
}

// The cache keeps the profiles used last: one used again without changes
// moves to the front, so a new profile does not push it out.
func TestCacheKeepsTheProfilesUsedLast(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	run := func(model string) int64 {
		t.Helper()
		before := bpeNodes.Load()
		if _, err := View(context.Background(), openView(t, dir, "", false), Options{Model: model, NoCalibrate: true}); err != nil {
			t.Fatal(err)
		}
		return bpeNodes.Load() - before
	}
	// Four profiles fill the file; gpt-4o, used again, must survive a fifth.
	for _, m := range []string{"gpt-4o", "gpt-4", "claude-sonnet-4", "gemini-2.5-pro"} {
		if n := run(m); n != 16 {
			t.Fatalf("%s: %d tokenized, want 16", m, n)
		}
	}
	if n := run("gpt-4o"); n != 0 {
		t.Fatalf("gpt-4o again: %d tokenized", n)
	}
	if n := run("llama-3.1-8b"); n != 16 {
		t.Fatalf("llama: %d tokenized", n)
	}
	if n := run("gpt-4o"); n != 0 {
		t.Errorf("gpt-4o was pushed out by a newer profile: %d recounted", n)
	}
}

// Issue 18 item 17: the caches live in DIR/cache/ (docs/FORMAT.md §1),
// never at the top of the session; the counts an earlier version left in
// DIR/estimate.cache are read once, then both legacy files are gone.
func TestCachesLiveInCacheDir(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "fork")
	var warnings []string
	opts := Options{Model: "gpt-4o", NoCalibrate: true, Warn: func(m string) { warnings = append(warnings, m) }}
	run := func(wantBPE int64) {
		t.Helper()
		before := bpeNodes.Load()
		if _, err := View(context.Background(), openView(t, dir, "a2", false), opts); err != nil {
			t.Fatal(err)
		}
		if n := bpeNodes.Load() - before; n != wantBPE {
			t.Errorf("%d nodes tokenized, want %d", n, wantBPE)
		}
	}
	run(5)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "estimate") {
			t.Errorf("a cache at the top of the session: %s", e.Name())
		}
	}
	if _, err := os.Stat(CachePath(dir, CacheFile)); err != nil {
		t.Fatalf("no count cache in cache/: %v", err)
	}
	// An earlier version's layout: the same counts at the top.
	if err := os.Rename(CachePath(dir, CacheFile), filepath.Join(dir, LegacyCacheFile)); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, LegacyViewCacheFile), []byte("{}"), 0o644)
	run(0) // read from the legacy file
	if err := StoreView(dir, "k", &Result{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{LegacyCacheFile, LegacyViewCacheFile} {
		if _, err := os.Lstat(filepath.Join(dir, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still there after its replacement was written (%v)", name, err)
		}
	}
	run(0) // from cache/ now
	if len(warnings) > 0 {
		t.Errorf("warnings: %q", warnings)
	}
	// A cache/ that is a symlink is never written through.
	os.RemoveAll(filepath.Join(dir, CacheDir))
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, CacheDir)); err != nil {
		t.Fatal(err)
	}
	run(5)
	if got, _ := os.ReadDir(outside); len(got) != 0 {
		t.Errorf("wrote %d files through a symlinked cache/", len(got))
	}
}

// TestViewReportsProgress: Counting announces the nodes a count goes
// through and Counted adds up to them, so a progress bar moves within one
// session.
func TestViewReportsProgress(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	v := openView(t, dir, "", false)
	var total, done atomic.Int64
	opts := Options{Model: "gpt-4o", NoCalibrate: true, NoCache: true, Workers: 2,
		Counting: func(n int) { total.Add(int64(n)) }, Counted: func(n int) { done.Add(int64(n)) }}
	if _, err := View(context.Background(), v, opts); err != nil {
		t.Fatal(err)
	}
	if total.Load() != int64(len(v.Indexes)) || done.Load() != total.Load() {
		t.Fatalf("counting %d, counted %d, view %d", total.Load(), done.Load(), len(v.Indexes))
	}
}
