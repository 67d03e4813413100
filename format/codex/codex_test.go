package codex_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/format/codex"
	"github.com/ctxfold/ctxfold/internal/importtest"
	"github.com/ctxfold/ctxfold/transcript"
)

const dir = "../../fixtures/import/codex/"

func load(t *testing.T, file string, opts codex.Options) (*importtest.Conv, error) {
	t.Helper()
	var tg importtest.Target
	err := codex.Import(context.Background(), []string{file}, opts, &tg)
	if len(tg.Convs) == 0 {
		return nil, err
	}
	return tg.Convs[0], err
}

func TestCompactedRollout(t *testing.T) {
	c, err := load(t, dir+"rollout-compacted.jsonl", codex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Counted by hand from the fixture: 1 developer + 3 user messages, 5
	// model requests, 4 tool outputs (2 function, 2 custom), 1 compaction.
	want := importtest.Stats{Nodes: 14, Summaries: 1, User: 3, System: 1, Assistant: 5, Tool: 4, Calls: 4, Results: 4}
	if got := importtest.StatsOf(c.Nodes); got != want {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
	var inputs []int64
	var summary *transcript.Node
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if n.Role == transcript.RoleAssistant {
			if n.Usage == nil {
				t.Fatalf("assistant %s has no usage", n.ID)
			}
			inputs = append(inputs, n.Usage.InputTokens)
		}
		if n.IsSummary() {
			summary = n
		}
	}
	// One token count per request, each on its own request; repeats dropped.
	if fmt.Sprint(inputs) != "[1200 1400 1500 800 1000]" {
		t.Errorf("usage input tokens %v", inputs)
	}
	if summary == nil || summary.Predecessor != "" || len(c.Covers(*summary)) != 10 {
		t.Fatalf("summary %+v", summary)
	}
	if !strings.HasPrefix(summary.Content.Text, transcript.SummaryPrefix+"user: The tests in ./calc fail") {
		t.Errorf("summary text %q", summary.Content.Text)
	}
	first := c.Nodes[3]
	if first.Role != transcript.RoleAssistant || !strings.Contains(string(first.Content.Blocks[0].Extra[transcript.ExtraEncryptedContent]), "gAAAAopaque-reasoning-1") {
		t.Errorf("encrypted reasoning not preserved: %+v", first.Content.Blocks[0])
	}
	if first.Content.Blocks[0].Type != transcript.BlockThinking || first.Content.Blocks[0].Text != "**Running the tests first**" {
		t.Errorf("reasoning summary not kept as thinking: %+v", first.Content.Blocks)
	}
	if c.Counts[[2]string{"event_msg/agent_message", transcript.OutcomeSkipped}] != 2 || c.Counts[[2]string{"event_msg/user_message", transcript.OutcomeSkipped}] != 2 {
		t.Errorf("mirrors not counted as skipped: %v", c.Counts)
	}
	if c.Model != "gpt-5-codex" || c.Name != "0199aaaa-bbbb-7ccc-8ddd-00000000c0de" {
		t.Errorf("model %q name %q", c.Model, c.Name)
	}
}

func TestTruncatedRollout(t *testing.T) {
	c, err := load(t, dir+"rollout-truncated.jsonl", codex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Nodes) != 4 {
		t.Fatalf("%d nodes", len(c.Nodes))
	}
	last := c.Nodes[3]
	if string(last.Metadata["unanswered_tool_calls"]) != `["call_wc"]` {
		t.Errorf("unanswered call not flagged: %s", last.Metadata["unanswered_tool_calls"])
	}
	// The older writer logs the token count before the request's items.
	if c.Nodes[1].Usage.InputTokens != 900 || last.Usage.InputTokens != 1000 {
		t.Errorf("usage %d, %d", c.Nodes[1].Usage.InputTokens, last.Usage.InputTokens)
	}
	joined := strings.Join(c.Warnings, "\n")
	if !strings.Contains(joined, "torn last line") || !strings.Contains(joined, "call_wc") {
		t.Errorf("warnings %q", joined)
	}
}

func TestMalformed(t *testing.T) {
	_, err := load(t, dir+"malformed.jsonl", codex.Options{})
	var pe *transcript.ParseError
	if !errors.As(err, &pe) || pe.Line != 3 || !strings.HasSuffix(pe.File, "malformed.jsonl") {
		t.Fatalf("err %v", err)
	}
}

func TestLineLimit(t *testing.T) {
	_, err := load(t, dir+"rollout-compacted.jsonl", codex.Options{MaxLineBytes: 100})
	var pe *transcript.ParseError
	if !errors.As(err, &pe) || pe.Line != 1 || !strings.Contains(pe.Msg, "longer than the 100-byte limit") {
		t.Fatalf("err %v", err)
	}
}

func TestDetect(t *testing.T) {
	for _, f := range []string{"rollout-compacted.jsonl", "rollout-truncated.jsonl"} {
		data, _ := os.ReadFile(dir + f)
		if !codex.Detect(data) {
			t.Errorf("%s not detected", f)
		}
	}
	long := `{"id":"x","timestamp":"t","instructions":"` + strings.Repeat("a", 70000)
	if !codex.Detect([]byte(long)) {
		t.Error("a bare header cut by the end of head not detected")
	}
	for _, s := range []string{`[{"role":"user"}]`, `{"sessionId":"x","projectHash":"y"}`, ``} {
		if codex.Detect([]byte(s)) {
			t.Errorf("%q detected as a rollout", s)
		}
	}
}

func FuzzImport(f *testing.F) {
	importtest.Fuzz(f, dir, []string{"rollout-compacted.jsonl", "rollout-truncated.jsonl", "rollout-bare-2025.jsonl", "malformed.jsonl"}, "rollout.jsonl", codex.Import)
}

func ExampleImport() {
	var tg importtest.Target
	err := codex.Import(context.Background(), []string{dir + "rollout-compacted.jsonl"}, codex.Options{}, &tg)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range tg.Convs[0].Nodes {
		fmt.Println(n.ID, n.Role, len(n.ToolCalls))
	}
	// Output:
	// cx0000c0de-2 system 0
	// cx0000c0de-3 user 0
	// cx0000c0de-4 user 0
	// cx0000c0de-9 assistant 2
	// cx0000c0de-15 tool 0
	// cx0000c0de-16 tool 0
	// cx0000c0de-19 assistant 1
	// cx0000c0de-22 tool 0
	// cx0000c0de-25 assistant 0
	// cx0000c0de-29 user 0
	// summary_cx0000c0de-31 user 0
	// cx0000c0de-34 assistant 1
	// cx0000c0de-37 tool 0
	// cx0000c0de-38 assistant 0
}

func TestBare2025Format(t *testing.T) {
	c, err := load(t, dir+"rollout-bare-2025.jsonl", codex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := importtest.Stats{Nodes: 5, User: 2, Assistant: 2, Tool: 1, Calls: 1, Results: 1}
	if got := importtest.StatsOf(c.Nodes); got != want {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
	if c.Name != "5f2c0d1e-aaaa-bbbb-cccc-0000000ba4e0" || c.Counts[[2]string{"record_type/state", transcript.OutcomeSkipped}] != 3 {
		t.Errorf("name %q counts %v", c.Name, c.Counts)
	}
	data, _ := os.ReadFile(dir + "rollout-bare-2025.jsonl")
	if !codex.Detect(data) {
		t.Error("bare format not detected")
	}
}

// Codex 0.169 (testdata/interop, recorded by interop/codex/record.sh):
// base_instructions become the first node, token_usage_record gives each
// request its usage (token_count comes after the tool outputs), and the
// recorded context window is kept on that usage.
func TestRollout0169(t *testing.T) {
	const file = "../../testdata/interop/codex/0.169.0/tool/rollout-2026-01-01T00-00-00-00000000-0000-7000-8000-000000000001.jsonl"
	c, err := load(t, file, codex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	base := c.Nodes[0]
	if base.Role != transcript.RoleSystem || base.Predecessor != "" || !strings.HasPrefix(base.Content.Text, "You are Codex") ||
		string(base.Metadata["codex_base_instructions"]) != "true" || base.Metadata["codex_session_meta"] == nil {
		t.Fatalf("first node %+v", base)
	}
	want := importtest.Stats{Nodes: 9, System: 2, User: 3, Assistant: 3, Tool: 1, Calls: 1, Results: 1}
	if got := importtest.StatsOf(c.Nodes); got != want {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
	var inputs []int64
	for _, n := range c.Nodes {
		if n.Role == transcript.RoleAssistant {
			if n.Usage == nil || n.Usage.ContextWindow() != 258400 {
				t.Fatalf("assistant %s usage %+v", n.ID, n.Usage)
			}
			inputs = append(inputs, n.Usage.InputTokens)
		}
	}
	// The counts of requests 1..3 (the fake reports a quarter of each body's bytes).
	if fmt.Sprint(inputs) != "[9535 9644 9725]" {
		t.Errorf("usage input tokens %v", inputs)
	}
	for _, k := range [][2]string{{"world_state", transcript.OutcomeSkipped}, {"token_usage_record", transcript.OutcomeMerged},
		{"event_msg/thread_settings_applied", transcript.OutcomeSkipped}, {"session_meta", transcript.OutcomeImported}} {
		if c.Counts[k] == 0 {
			t.Errorf("no %v in %v", k, c.Counts)
		}
	}
	if c.Model != "gpt-5.5" || len(c.Warnings) != 0 {
		t.Errorf("model %q warnings %q", c.Model, c.Warnings)
	}
}

// Codex compacting by itself (a provider without a compaction endpoint)
// sends a request of its own: its summary is an assistant node, right
// after the answer before it (not merged into it), and its usage moves to
// metadata.codex_compaction_usage, so only the turns' requests carry usage.
func TestLocalCompactionRequest(t *testing.T) {
	const file = "../../testdata/interop/codex/0.169.0/compaction-limit/rollout-2026-01-01T00-00-00-00000000-0000-7000-8000-000000000001.jsonl"
	c, err := load(t, file, codex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var turns []int64
	var compactions []string
	for _, n := range c.Nodes {
		if n.Role != transcript.RoleAssistant {
			continue
		}
		text := n.Content.PlainText()
		switch {
		case strings.HasPrefix(text, "Summary for the next model"):
			if n.Usage != nil || n.Metadata["codex_compaction_usage"] == nil {
				t.Errorf("compaction request %s: usage %+v, metadata %s", n.ID, n.Usage, n.Metadata["codex_compaction_usage"])
			}
			compactions = append(compactions, n.ID)
		case n.Usage == nil:
			t.Errorf("turn request %s without usage", n.ID)
		case strings.Contains(text, "Summary for the next model"):
			t.Errorf("%s holds a compaction request's summary too: %q", n.ID, text)
		default:
			turns = append(turns, n.Usage.InputTokens)
		}
	}
	if len(compactions) != 2 || fmt.Sprint(turns) != "[9541 9704 9744]" {
		t.Errorf("compaction requests %v, turn requests' input %v; want 2 and [9541 9704 9744]", compactions, turns)
	}
}

// A fork imported with its parent continues the parent's conversation from
// the node recorded before history_base.end_ordinal_exclusive, as a branch;
// alone, it is its own conversation, with a warning.
func TestFork(t *testing.T) {
	const fork = "../../testdata/interop/codex/0.169.0/fork/"
	parent := fork + "rollout-2026-01-01T00-00-00-00000000-0000-7000-8000-000000000001.jsonl"
	child := fork + "rollout-2026-01-01T00-00-00-00000000-0000-7000-8000-000000000016.jsonl"
	for _, files := range [][]string{{parent, child}, {child, parent}} {
		var tg importtest.Target
		if err := codex.Import(context.Background(), files, codex.Options{}, &tg); err != nil {
			t.Fatal(err)
		}
		if len(tg.Convs) != 1 {
			t.Fatalf("%d conversations, want 1", len(tg.Convs))
		}
		preds := map[string]int{}
		var forkStart *transcript.Node
		for i, n := range tg.Convs[0].Nodes {
			preds[n.Predecessor]++
			if strings.HasPrefix(n.ID, "cx00000016-") && forkStart == nil {
				forkStart = &tg.Convs[0].Nodes[i]
			}
		}
		if forkStart == nil || forkStart.Predecessor != "cx00000001-16" || preds["cx00000001-16"] != 2 || forkStart.Role != transcript.RoleUser {
			t.Errorf("fork start %+v, children of the fork point %d", forkStart, preds["cx00000001-16"])
		}
	}
	c, err := load(t, child, codex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "forked from thread 00000000-0000-7000-8000-000000000001") || c.Nodes[0].Predecessor != "" {
		t.Errorf("alone: warnings %q, first node %+v", c.Warnings, c.Nodes[0])
	}
}

// A sub-agent's rollout imported with its parent's is a chain of the same
// session whose every node names the spawning assistant node as caller;
// the namespace of its tools is kept on the calls.
func TestSubagent(t *testing.T) {
	const dir = "../../testdata/interop/codex/0.169.0/subagent/"
	parent := dir + "rollout-2026-01-01T00-00-00-00000000-0000-7000-8000-000000000001.jsonl"
	child := dir + "rollout-2026-01-01T00-00-00-00000000-0000-7000-8000-000000000009.jsonl"
	var tg importtest.Target
	if err := codex.Import(context.Background(), []string{child, parent}, codex.Options{}, &tg); err != nil {
		t.Fatal(err)
	}
	if len(tg.Convs) != 1 {
		t.Fatalf("%d conversations, want 1", len(tg.Convs))
	}
	var spawner *transcript.Node
	var children int
	for i, n := range tg.Convs[0].Nodes {
		if n.ID == "cx00000001-10" {
			spawner = &tg.Convs[0].Nodes[i]
		}
		if strings.HasPrefix(n.ID, "cx00000009-") {
			children++
			if n.Caller != "cx00000001-10" {
				t.Errorf("%s: caller %q", n.ID, n.Caller)
			}
		} else if n.Caller != "" {
			t.Errorf("%s of the parent has caller %q", n.ID, n.Caller)
		}
	}
	if children != 5 || spawner == nil || len(spawner.ToolCalls) != 1 || spawner.ToolCalls[0].Name != "spawn_agent" ||
		string(spawner.ToolCalls[0].Extra[transcript.ExtraNamespace]) != `"multi_agent_v1"` {
		t.Fatalf("%d child nodes, spawner %+v", children, spawner)
	}
	c, err := load(t, child, codex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "sub-agent of thread 00000000-0000-7000-8000-000000000001") || c.Nodes[0].Caller != "" {
		t.Errorf("alone: warnings %q", c.Warnings)
	}
}
