package estimate

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
)

// claudeModelSwitch writes a Claude Code session of opus requests (five
// when 0) that claude-opus-4-8 answered (Claude Opus 4.7's tokenizer),
// each reading a Read result more, then a /model command to
// claude-sonnet-4-6 (the earlier tokenizer) and a prompt; with answered,
// one more request the new model answered follows, reading input6. It
// returns the session, imported.
func claudeModelSwitch(t *testing.T, answered bool, input6, opus int) string {
	t.Helper()
	if opus == 0 {
		opus = 5
	}
	var lines []string
	add := func(format string, a ...any) { lines = append(lines, fmt.Sprintf(format, a...)) }
	line := func(typ, uuid, parent, msg, extra string) {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		add(`{"parentUuid":%s,"isSidechain":false,"type":"%s","uuid":"%s","sessionId":"s","version":"2.1.165","cwd":"/w","timestamp":"2026-06-06T04:00:00Z"%s,"message":%s}`, p, typ, uuid, extra, msg)
	}
	assistant := func(uuid, parent, model, content string, input int) {
		line("assistant", uuid, parent, fmt.Sprintf(`{"id":"msg_%s","type":"message","role":"assistant","model":"%s","content":%s,"usage":{"input_tokens":4,"cache_read_input_tokens":%d,"output_tokens":20}}`, uuid, model, content, input-4), "")
	}
	line("user", "u0", "", `{"role":"user","content":"Read the five modules and say which one retries."}`, "")
	prev, input := "u0", 30000
	for k := 1; k <= opus; k++ {
		a, r := fmt.Sprintf("a%d", k), fmt.Sprintf("r%d", k)
		assistant(a, prev, "claude-opus-4-8", fmt.Sprintf(`[{"type":"tool_use","id":"t%d","name":"Read","input":{"file_path":"/w/m%d.go"}}]`, k, k), input)
		line("user", r, a, fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","content":"%s"}]}`, k, strings.Repeat(fmt.Sprintf("func retry%d(n int) error { return backoff(n, %d) }\\n", k, k), 60)), "")
		prev = r
		input += 1560 // each result: about 1,020 tokens as o200k counts them, at Opus 4.7's rate
	}
	line("user", "c1", prev, `{"role":"user","content":"<command-name>/model</command-name>\n            <command-message>model</command-message>\n            <command-args>claude-sonnet-4-6</command-args>"}`, "")
	line("user", "c2", "c1", `{"role":"user","content":"<local-command-stdout>Set model to claude-sonnet-4-6</local-command-stdout>"}`, "")
	line("user", "u1", "c2", `{"role":"user","content":"Which one retries?"}`, "")
	if answered {
		assistant("a6", "u1", "claude-sonnet-4-6", `[{"type":"text","text":"m3 retries."}]`, input6)
	}
	return importLines(t, lines)
}

// A /model command to a model of another tokenizer: the next request reads
// the same conversation at the new tokenizer's rate, so the prediction in
// the latest request's count is rescaled by the two rates (docs/ESTIMATE.md,
// "A model switch"); before, the status line kept the old model's count
// (43.6% high in a real desktop-app session, docs/ACCURACY.md).
func TestModelSwitchRescalesTheNextRequest(t *testing.T) {
	dir := claudeModelSwitch(t, false, 0, 0)
	v := openView(t, dir, "", false)
	if v.Graph.S.Meta.Model != "claude-sonnet-4-6" {
		t.Fatalf("session model %q, want the /model command's claude-sonnet-4-6", v.Graph.S.Meta.Model)
	}
	switched, err := View(context.Background(), v, Options{Model: "claude-sonnet-4-6", NodeDetail: true})
	if err != nil || switched.Calibration == nil {
		t.Fatalf("estimate: %v", err)
	}
	kept, err := View(context.Background(), v, Options{Model: "claude-opus-4-8", NodeDetail: true})
	if err != nil || kept.Calibration == nil {
		t.Fatalf("estimate: %v", err)
	}
	c, k := switched.Calibration, kept.Calibration
	for i, r := range c.History {
		if r.Tokenizer != tokenizerClaudeV47 {
			t.Errorf("request %d: tokenizer %d, want Claude Opus 4.7's (%d)", i+1, r.Tokenizer, tokenizerClaudeV47)
		}
	}
	if c.PriorSlope != ClaudeV47ProxySlope {
		t.Errorf("prior slope %v, want the tokenizer of the requests fitted, %v", c.PriorSlope, ClaudeV47ProxySlope)
	}
	want := float64(k.CalibratedTotal) * ClaudeProxySlope / k.Slope
	if math.Abs(float64(c.CalibratedTotal)-want) > 0.005*want {
		t.Errorf("after /model: calibrated %d, want the kept model's %d at the new tokenizer's rate, %.0f (%.3f/%.3f)", c.CalibratedTotal, k.CalibratedTotal, want, ClaudeProxySlope, k.Slope)
	}
	if int64(c.CalibratedTotal) >= c.Measured {
		t.Errorf("after /model: calibrated %d, not below the latest request's %d", c.CalibratedTotal, c.Measured)
	}
}

// After the new model's first reply the anchor is its own request again,
// the step across the switch is not fitted, and the series predicts the
// switch's request rescaled, as estimate at its cut does.
func TestModelSwitchAnchorsOnTheNewModel(t *testing.T) {
	before := estimateHead(t, claudeModelSwitch(t, false, 0, 0)).Calibration
	const input6 = 28000
	res := estimateHead(t, claudeModelSwitch(t, true, input6, 0))
	c := res.Calibration
	if n := len(c.History); n != 6 || c.History[5].Tokenizer != tokenizerClaude {
		t.Fatalf("%d requests, the last answered with tokenizer %d; want 6, the last %d", n, c.History[n-1].Tokenizer, tokenizerClaude)
	}
	if c.PriorSlope != ClaudeProxySlope {
		t.Errorf("prior slope %v, want the new model's %v", c.PriorSlope, ClaudeProxySlope)
	}
	if c.Measured != input6 || c.CalibratedTotal < input6 || c.CalibratedTotal > input6+200 {
		t.Errorf("calibrated %d, want request 6's %d and the reply after it", c.CalibratedTotal, input6)
	}
	s := c.Series()
	if s[5].Estimated != before.CalibratedTotal {
		t.Errorf("series at request 6: %d, want estimate at its cut, %d", s[5].Estimated, before.CalibratedTotal)
	}
	// The step across the switch (a fall of 9,800 for a growth) is not
	// fitted: the fit of the requests is the one without request 6.
	f := FitRequestsPrior(c.History, tokenizerPriors(tokenizerClaude))
	if f.FittedSlope != 0 {
		t.Errorf("fitted slope %v over one request of the new tokenizer; want none (the steps before the switch are the old one's)", f.FittedSlope)
	}
}

// The answering model's tokenizer survives the count cache's entry (its
// word shared with the overhead) and the incremental sidecar, so a warm
// run sees the switch a cold one sees.
func TestTokenizerIsKeptInTheCaches(t *testing.T) {
	p := parts{Text: 7, Overhead: 5, Measured: 1 << 39, Hidden: 1<<24 - 1, Tokenizer: tokenizerClaudeV47}
	e := make([]byte, cacheEntrySize)
	putEntry(e, cacheKey{1}, p)
	if k, got, ok := entryOf(e); !ok || k != (cacheKey{1}) || got != p {
		t.Errorf("count cache entry: %+v (ok %v), want %+v", got, ok, p)
	}
	reqs := []MatchedRequest{{Node: "a1", Estimated: 10, Measured: 20, Tokenizer: tokenizerClaudeV47}, {Node: "a2", Estimated: 30, Measured: 40, Segment: 1, Tokenizer: tokenizerClaude}}
	_, got, err := decodeSidecar(encodeSidecar("k", nil, reqs), "k")
	if err != nil || len(got) != 2 || got[0] != reqs[0] || got[1] != reqs[1] {
		t.Errorf("sidecar: %+v (%v), want %+v", got, err, reqs)
	}
}

// The client's prefix, which a view after a compaction starts from, is
// taken in the latest tokenizer's count: over the requests since a switch.
func TestPrefixSinceTheSwitch(t *testing.T) {
	reqs := []MatchedRequest{
		{Estimated: 5000, Measured: 8000, Tokenizer: tokenizerClaudeV47},
		{Estimated: 5100, Measured: 8150, Tokenizer: tokenizerClaudeV47},
		{Estimated: 5200, Measured: 9500, Tokenizer: tokenizerClaude},
		{Estimated: 5300, Measured: 9610, Tokenizer: tokenizerClaude},
	}
	f := FitRequestsPrior(reqs, tokenizerPriors(tokenizerClaude))
	want := math.Min(9500-f.Slope*5200, 9610-f.Slope*5300)
	if math.Abs(f.Prefix-want) > 1e-6 {
		t.Errorf("prefix %.1f, want %.1f: the least unrecorded part since the switch (slope %.3f), not the earlier tokenizer's", f.Prefix, want, f.Slope)
	}
}

// With too few requests before the switch to fit a slope, the series at
// the switch fits them with their own tokenizer's prior, as estimate at
// its cut does: the two agree.
func TestModelSwitchSeriesAtTheCut(t *testing.T) {
	before := estimateHead(t, claudeModelSwitch(t, false, 0, 2)).Calibration
	if before.Method != MethodPriorSlope+MethodPriorFramingSuffix && before.FittedSlope != 0 {
		t.Fatalf("method %s, fitted slope %v: want the prior slope (too few requests)", before.Method, before.FittedSlope)
	}
	c := estimateHead(t, claudeModelSwitch(t, true, 26000, 2)).Calibration
	if s := c.Series(); len(s) != 3 || s[2].Estimated != before.CalibratedTotal {
		t.Errorf("series at the switch %+v, want estimate at its cut, %d", s, before.CalibratedTotal)
	}
}
