package cmd

import (
	"encoding/json"
	"strings"
	"testing"
)

// A session that is one long agentic turn — one request, then hundreds of
// tool steps — compacts (docs/COMPACT.md §2): the tail starts at a step of
// the turn, right after tool results, the request stays visible in the
// summary, every kept tool call keeps its result next to it
// (docs/FORMAT.md §2) and the session still verifies.
func TestCompactOneLongTurn(t *testing.T) {
	dir := oneTurnSession(t, 300)
	r := cliRun(t, nil, false, "compact", dir, "--keep-tokens", "2000", "--json")
	var res compactJSON
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || r.Code != 0 || res.Outcome != "succeeded" {
		t.Fatalf("%v exit %d\n%s%s", err, r.Code, r.Stdout, r.Stderr)
	}
	if v := cliRun(t, nil, false, "verify", dir); v.Code != 0 || !strings.Contains(v.Stdout, "1 summary") {
		t.Fatalf("verify: %d %s%s", v.Code, v.Stdout, v.Stderr)
	}
	// A second run with nothing new is the no-op (docs/COMPACT.md §2).
	again := cliRun(t, nil, false, "compact", dir, "--keep-tokens", "2000", "--json")
	if err := json.Unmarshal([]byte(again.Stdout), &res); err != nil || again.Code != 0 || res.Outcome != "no_op" {
		t.Fatalf("second run: %v exit %d %s", err, again.Code, again.Stdout)
	}
	r = cliRun(t, nil, false, "render", dir, "--format", "openai")
	var msgs []struct {
		Role       string `json:"role"`
		Content    any    `json:"content"`
		ToolCallID string `json:"tool_call_id"`
		ToolCalls  []struct {
			ID string `json:"id"`
		} `json:"tool_calls"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &msgs); err != nil || r.Code != 0 {
		t.Fatalf("render: %v %d %s", err, r.Code, r.Stderr)
	}
	// system, the summary, then the kept steps: an assistant first.
	if len(msgs) < 4 || msgs[0].Role != "system" || msgs[1].Role != "user" || msgs[2].Role != "assistant" {
		t.Fatalf("rendered view starts %+v", msgs[:min(len(msgs), 3)])
	}
	summary, _ := msgs[1].Content.(string)
	if !strings.Contains(summary, "## Objective\nFix the failing tests in pkg/a.") {
		t.Errorf("the request is not visible in the summary:\n%.400s", summary)
	}
	kept := len(msgs) - 2
	if kept >= 601 || kept < 4 {
		t.Errorf("kept %d of 601 messages", kept)
	}
	// The Messages API shape alternates: the summary is the user turn the
	// kept assistant steps answer.
	r = cliRun(t, nil, false, "render", dir, "--format", "anthropic")
	var body struct {
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &body); err != nil || r.Code != 0 || len(body.Messages) < 2 {
		t.Fatalf("render anthropic: %v %d %s", err, r.Code, r.Stderr)
	}
	for i, m := range body.Messages {
		if want := []string{"user", "assistant"}[i%2]; m.Role != want {
			t.Fatalf("anthropic message %d is %s, want %s", i, m.Role, want)
		}
	}
	// Each kept call is answered by the next message.
	for i, m := range msgs {
		for _, c := range m.ToolCalls {
			if i+1 >= len(msgs) || msgs[i+1].ToolCallID != c.ID {
				t.Fatalf("message %d: call %s is not followed by its result", i, c.ID)
			}
		}
		if m.Role == "tool" && (i == 0 || len(msgs[i-1].ToolCalls) == 0) {
			t.Fatalf("message %d: a result without its call", i)
		}
	}
}
