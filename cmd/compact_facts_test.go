package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// compactJSON is the part of compact --json these tests read.
type compactJSON struct {
	Outcome             string                   `json:"outcome"`
	SummaryID           string                   `json:"summary_id"`
	SummaryTokens       int                      `json:"summary_tokens"`
	SummaryCapTokens    int                      `json:"summary_cap_tokens"`
	SummaryGrowthTokens int                      `json:"summary_growth_tokens"`
	LedgerFacts         int                      `json:"ledger_facts"`
	Survival            *transcript.FactSurvival `json:"survival"`
}

func compactTools(t *testing.T, pin string, args ...string) (string, compactJSON, cliResult) {
	t.Helper()
	dir := sessiontest.CopyFixture(t, "tools")
	if pin != "" {
		if r := cliRun(t, nil, false, "pin", dir, pin); r.Code != 0 {
			t.Fatalf("pin: %d %s", r.Code, r.Stderr)
		}
	}
	r := cliRun(t, nil, false, append([]string{"compact", dir, "--json"}, args...)...)
	var out compactJSON
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("compact --json: %v: %q %s", err, r.Stdout, r.Stderr)
	}
	return dir, out, r
}

// auditKinds is `ctxfold audit --json`'s kept/total per kind of the
// active summary.
func auditKinds(t *testing.T, dir string) map[string][2]int {
	t.Helper()
	r := cliRun(t, nil, false, "audit", dir, "--json")
	var obj struct {
		Summaries []struct {
			Kinds []struct {
				Kind        string
				Total, Kept int
			}
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &obj); err != nil || len(obj.Summaries) != 1 {
		t.Fatalf("audit: %v %q %s", err, r.Stdout, r.Stderr)
	}
	out := map[string][2]int{}
	for _, k := range obj.Summaries[0].Kinds {
		out[k.Kind] = [2]int{k.Kept, k.Total}
	}
	return out
}

// Issue 25's case: pinning a node costs no other fact. On fixtures/tools
// at --keep-tokens 200 every kind survives as without the pin, the pinned
// text is quoted verbatim besides them, and the growth past the cap that
// holding both takes is reported (and equals summary − cap).
func TestPinAddsToTheFactsNeverInstead(t *testing.T) {
	base, plain, _ := compactTools(t, "", "--keep-tokens", "200")
	want := auditKinds(t, base)
	if plain.Survival == nil || plain.Survival.Kept != plain.Survival.Total {
		t.Fatalf("without a pin: survival %+v", plain.Survival)
	}
	for _, pin := range []string{"u1", "a5", "t2"} {
		dir, res, r := compactTools(t, pin, "--keep-tokens", "200")
		if res.Outcome != "succeeded" {
			t.Fatalf("pin %s: %d %s %s", pin, r.Code, r.Stdout, r.Stderr)
		}
		got := auditKinds(t, dir)
		for k, w := range want {
			if got[k] != w {
				t.Errorf("pin %s: %s %v, without the pin %v", pin, k, got[k], w)
			}
		}
		n, err := store.Open(dir, store.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pinned, _ := n.NodeByID(pin)
		n.Close()
		text := summaryText(t, dir, res.SummaryID)
		for _, p := range pinnedTextsOf(pinned) {
			if !strings.Contains(text, p) {
				t.Errorf("pin %s: the summary does not quote %q", pin, p)
			}
		}
		if res.SummaryGrowthTokens != max(res.SummaryTokens-res.SummaryCapTokens, 0) || res.SummaryCapTokens == 0 {
			t.Errorf("pin %s: growth %d, summary %d, cap %d", pin, res.SummaryGrowthTokens, res.SummaryTokens, res.SummaryCapTokens)
		}
	}
	// The large pinned tool result does not fit the cap beside the facts:
	// the summary grows, and the text report says by how much.
	dir := sessiontest.CopyFixture(t, "tools")
	cliRun(t, nil, false, "pin", dir, "t2")
	r := cliRun(t, nil, false, "compact", dir, "--keep-tokens", "200")
	if r.Code != 0 || !strings.Contains(r.Stdout, "past its cap of") || !strings.Contains(r.Stdout, "survival: 14 of 14 facts (100.0%)") {
		t.Errorf("text report: %d %s %s", r.Code, r.Stdout, r.Stderr)
	}
}

func pinnedTextsOf(n *transcript.Node) []string {
	if t := strings.TrimSpace(n.Content.PlainText()); t != "" {
		return []string{t}
	}
	var out []string
	for _, r := range n.ToolResults() {
		out = append(out, strings.TrimSpace(r.Text))
	}
	return out
}

// Pins and facts that cannot both fit the ceiling fail the compaction
// with a message that says so; nothing is dropped silently.
func TestPinsThatDisplaceFactsFailClearly(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	cliRun(t, nil, false, "pin", dir, "t2")
	before := readSessionFile(t, dir, store.NodesFile)
	r := cliRun(t, nil, false, "compact", dir, "--keep-tokens", "200", "--max-summary-tokens", "300")
	if r.Code != 3 || !strings.Contains(r.Stderr, "the pinned texts (") || !strings.Contains(r.Stderr, "raise --max-summary-tokens or unpin") {
		t.Fatalf("%d %s %s", r.Code, r.Stdout, r.Stderr)
	}
	if readSessionFile(t, dir, store.NodesFile) != before {
		t.Fatal("a summary was written")
	}
}

func readSessionFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func execSummarizer(t *testing.T, script string) []string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "summarizers", script))
	if err != nil {
		t.Fatal(err)
	}
	return []string{"--summarizer", "exec", "--summarizer-cmd", "sh '" + p + "'"}
}

// A model's summary that drops facts gets them back as a fact ledger
// within the budget, and then passes audit (every kind ≥ 95%), also
// under --min-survival 95.
func TestExecSummaryGetsAFactLedger(t *testing.T) {
	args := append([]string{"--keep-tokens", "200", "--min-survival", "95"}, execSummarizer(t, "drop-facts.sh")...)
	dir, res, r := compactTools(t, "", args...)
	if r.Code != 0 || res.Outcome != "succeeded" || res.LedgerFacts == 0 {
		t.Fatalf("%d %+v %s", r.Code, res, r.Stderr)
	}
	text := summaryText(t, dir, res.SummaryID)
	if !strings.Contains(text, "Fix the failing duration test.") || !strings.Contains(text, "\n## Fact ledger\n- ") {
		t.Fatalf("summary:\n%s", text)
	}
	for k, kt := range auditKinds(t, dir) {
		if kt[1] > 0 && kt[0]*100 < 95*kt[1] {
			t.Errorf("audit: %s %d of %d", k, kt[0], kt[1])
		}
	}
	if res.Survival == nil || res.Survival.Kept != res.Survival.Total {
		t.Errorf("survival %+v", res.Survival)
	}
	// The compaction event records the same survival.
	evs := readSessionFile(t, dir, "events.jsonl")
	if !strings.Contains(evs, `"summary_tokens":`+fmt.Sprint(res.SummaryTokens)+`,"survival":{"kept":14,"kinds":{"change":{"kept":1,"survival_pct":100,"total":1},"command":{"kept":2,"survival_pct":100,"total":2},`) {
		t.Errorf("compaction_finished lacks the survival:\n%s", evs)
	}
}

// A summary that fills its ceiling with prose cannot be repaired: under
// --min-survival 95 it is rejected (exit 3, outcome "rejected") and every
// file of the session is byte-identical, events included; without the
// gate it is stored and its low survival reported.
func TestExecSummaryBelowMinSurvivalWritesNothing(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	files := map[string]string{}
	for _, f := range []string{store.NodesFile, store.MetaFile, "events.jsonl"} {
		files[f] = readSessionFile(t, dir, f)
	}
	args := append([]string{"compact", dir, "--json", "--keep-tokens", "200", "--max-summary-tokens", "300", "--min-survival", "95"}, execSummarizer(t, "filler.sh")...)
	r := cliRun(t, nil, false, args...)
	var res compactJSON
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
		t.Fatalf("%v %q", err, r.Stdout)
	}
	if r.Code != 3 || res.Outcome != "rejected" || !strings.Contains(r.Stderr, "context compaction rejected: the summary keeps") || res.Survival == nil {
		t.Fatalf("%d %s %s", r.Code, r.Stdout, r.Stderr)
	}
	for f, b := range files {
		if readSessionFile(t, dir, f) != b {
			t.Errorf("%s changed", f)
		}
	}
	// Without the gate the same summary is stored, its survival reported.
	ungated := append([]string{"compact", dir, "--json", "--keep-tokens", "200", "--max-summary-tokens", "300"}, execSummarizer(t, "filler.sh")...)
	r = cliRun(t, nil, false, ungated...)
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || r.Code != 0 || res.Survival == nil || res.Survival.SurvivalPct >= 95 {
		t.Fatalf("without --min-survival: %v %d %s %s", err, r.Code, r.Stdout, r.Stderr)
	}
}

// The extractive summary of fixtures/tools at --keep-tokens 200, as
// stored: its layout (objective, facts by rank one per line with their
// node ids, prose last) is the golden file.
func TestExtractiveSummaryLayoutGolden(t *testing.T) {
	dir, res, r := compactTools(t, "", "--keep-tokens", "200")
	if r.Code != 0 {
		t.Fatalf("%d %s", r.Code, r.Stderr)
	}
	got := summaryText(t, dir, res.SummaryID)
	golden := filepath.Join("testdata", "summary-tools.golden.md")
	if *updateGolden {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd -run TestExtractiveSummaryLayoutGolden -update-golden)", err)
	}
	if got != string(want) {
		t.Errorf("the summary differs from %s:\n got:\n%s\nwant:\n%s", golden, got, want)
	}
}
