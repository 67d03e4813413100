package openhands_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/format/openhands"
	"github.com/ctxfold/ctxfold/internal/importtest"
	"github.com/ctxfold/ctxfold/transcript"
)

const dir = "testdata/"

func byID(c *importtest.Conv, id string) *transcript.Node {
	for i := range c.Nodes {
		if c.Nodes[i].ID == id {
			return &c.Nodes[i]
		}
	}
	return nil
}

func TestOutputJSONL(t *testing.T) {
	var tg importtest.Target
	if err := openhands.Import(context.Background(), []string{dir + "output.jsonl"}, openhands.Options{}, &tg); err != nil {
		t.Fatal(err)
	}
	if len(tg.Convs) != 2 {
		t.Fatalf("%d conversations", len(tg.Convs))
	}
	c := tg.Convs[0]
	if c.Name != "django__django-11099" || c.Model != "anthropic/claude-3-5-sonnet-20241022" {
		t.Errorf("name %q model %q", c.Name, c.Model)
	}
	// Counted from the fixture: system, 2 user messages, the recall's
	// context (a user turn), 3 assistant turns with calls (one response
	// made two), 4 results, the final message, the finish turn, 1 summary.
	want := importtest.Stats{Nodes: 14, Summaries: 1, System: 1, User: 3, Assistant: 5, Tool: 4, Calls: 4, Results: 4}
	if got := importtest.StatsOf(c.Nodes); got != want {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
	two := byID(c, "e8")
	if two == nil || len(two.ToolCalls) != 2 || two.ToolCalls[0].Name != "think" || two.ToolCalls[1].ID != "toolu_04" {
		t.Fatalf("one response, two calls: %+v", two)
	}
	if u := two.Usage; u == nil || u.InputTokens != 6100 || u.CachedInputTokens != 5590 || u.OutputTokens != 140 {
		t.Errorf("usage from model_response %+v", u)
	}
	if got := string(byID(c, "e4").ToolCalls[0].Arguments); !strings.Contains(got, "grep -n regex") || strings.Contains(got, "thought") {
		t.Errorf("arguments are the model's: %s", got)
	}
	if r := byID(c, "e11"); r.Role != transcript.RoleTool || r.ToolCallID != "toolu_04" || string(r.Metadata["exit_code"]) != "1" {
		t.Errorf("failed command result %+v", r)
	}
	if u := byID(c, "e13").Usage; u == nil || u.InputTokens != 3100 || u.CachedInputTokens != 2900 {
		t.Errorf("usage from llm_metrics.token_usages %+v", u)
	}
	fin := byID(c, "e15")
	if len(fin.ToolCalls) != 0 || !strings.Contains(fin.Content.PlainText(), "[finish]") {
		t.Errorf("an unanswered finish is text, not an open call: %+v", fin)
	}
	var sum *transcript.Node
	for i := range c.Nodes {
		if c.Nodes[i].IsSummary() {
			sum = &c.Nodes[i]
		}
	}
	if sum == nil || strings.Join(sum.CoversIDs(), ",") != "e4,e5,e6,e7" || sum.Predecessor != "e3" || !strings.Contains(sum.Content.PlainText(), "anchored it") {
		t.Fatalf("summary %+v", sum)
	}

	old := tg.Convs[1]
	if got := importtest.StatsOf(old.Nodes); got != (importtest.Stats{Nodes: 4, User: 1, Assistant: 2, Tool: 1, Calls: 1, Results: 1}) {
		t.Fatalf("pairs: stats %+v", got)
	}
	if n := byID(old, "e1"); n.Content.PlainText() != "I will run python --version." || n.ToolCalls[0].ID != "oh-call-1" || old.Model != "gpt-4o-2024-05-13" {
		t.Errorf("an action without function calling: %+v", n)
	}
}

func TestFileStore(t *testing.T) {
	for _, in := range []string{dir + "sessions", dir + "sessions/3f9a1c2e", dir + "sessions/3f9a1c2e/events"} {
		var tg importtest.Target
		if err := openhands.Import(context.Background(), []string{in}, openhands.Options{}, &tg); err != nil {
			t.Fatal(err)
		}
		if len(tg.Convs) != 1 || tg.Convs[0].Name != "3f9a1c2e" {
			t.Fatalf("%s: %d conversations", in, len(tg.Convs))
		}
		c := tg.Convs[0]
		if got := importtest.StatsOf(c.Nodes); got != (importtest.Stats{Nodes: 6, User: 1, Assistant: 3, Tool: 2, Calls: 2, Results: 2}) {
			t.Fatalf("%s: stats %+v", in, got)
		}
		if c.Model != "claude-3-5-sonnet-20241022" {
			t.Errorf("%s: model %q, want the one model_response names", in, c.Model)
		}
		if e := byID(c, "e4"); string(e.Metadata["is_error"]) != "true" {
			t.Errorf("error observation %+v", e)
		}
	}
	if !openhands.DetectPath(dir+"sessions") || openhands.DetectPath(dir) {
		t.Error("DetectPath")
	}
}

func TestDetect(t *testing.T) {
	head, _ := os.ReadFile(dir + "output.jsonl")
	if !openhands.Detect(head) {
		t.Error("output.jsonl not detected")
	}
	row := []byte(`{"instance_id":"x","test_result":{}}`)
	if openhands.Detect(row) || !strings.Contains(openhands.Near("", row), `no "history"`) {
		t.Errorf("near: %q", openhands.Near("", row))
	}
	path := t.TempDir() + "/output.jsonl"
	os.WriteFile(path, append(row, '\n'), 0o644)
	err := openhands.Import(context.Background(), []string{path}, openhands.Options{}, &importtest.Target{})
	var pe *transcript.ParseError
	if !errors.As(err, &pe) || pe.Line != 1 {
		t.Errorf("row without history: %v", err)
	}
}

// A resolver row's history is in the older flattened form: fields inline,
// no id, source or cause.
func TestResolverRow(t *testing.T) {
	row := []byte(`{"issue":{"owner":"o","repo":"r","number":5},"issue_type":"issue","history":[` +
		`{"content":"Fix the issue.","images_urls":null,"wait_for_response":false,"action":"message","action_risk":null},` +
		`{"command":"ls","thought":"Look first.","keep_prompt":true,"action":"run","is_confirmed":"confirmed","action_risk":null},` +
		`{"content":"README.md","command_id":-1,"command":"ls","exit_code":0,"observation":"run"},` +
		`{"outputs":{},"thought":"Done.","action":"finish"}],"metrics":{"accumulated_cost":0.01},"error":null}` + "\n")
	if !openhands.Detect(row) {
		t.Fatal("a resolver row is not detected")
	}
	path := t.TempDir() + "/output.jsonl"
	os.WriteFile(path, row, 0o644)
	var tg importtest.Target
	if err := openhands.Import(context.Background(), []string{path}, openhands.Options{}, &tg); err != nil {
		t.Fatal(err)
	}
	c := tg.Convs[0]
	if got := importtest.StatsOf(c.Nodes); c.Name != "o-r-5" || got != (importtest.Stats{Nodes: 4, User: 1, Assistant: 2, Tool: 1, Calls: 1, Results: 1}) {
		t.Fatalf("%q: stats %+v", c.Name, got)
	}
	if n := c.Nodes[1]; n.Content.PlainText() != "Look first." || !strings.Contains(string(n.ToolCalls[0].Arguments), `"command":"ls"`) || c.Nodes[2].ToolCallID != n.ToolCalls[0].ID {
		t.Errorf("call %+v result %+v", n, c.Nodes[2])
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "flattened") {
		t.Errorf("warnings %v", c.Warnings)
	}
}

func FuzzImport(f *testing.F) {
	importtest.Fuzz(f, dir, []string{"output.jsonl"}, "output.jsonl", openhands.Import)
}
