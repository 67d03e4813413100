package summarize

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/transcript"
)

func todoCall(id, name, args string) transcript.Node {
	return transcript.Node{ID: id, Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{{ID: "c" + id, Name: name, Arguments: json.RawMessage(args)}}}
}

func todoResult(id, call string) transcript.Node {
	return transcript.Node{ID: id, Role: transcript.RoleTool, ToolCallID: call, Content: transcript.TextContent("ok")}
}

func summarizeNodes(t *testing.T, prev string, nodes ...transcript.Node) string {
	t.Helper()
	got, err := Extractive{}.Summarize(context.Background(), Request{Previous: prev, Nodes: sessiontest.Pointers(nodes), MaxTokens: 2000})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func section(summary, heading string) string {
	_, rest, ok := strings.Cut(summary, "## "+heading+"\n")
	if !ok {
		return ""
	}
	body, _, _ := strings.Cut(rest, "\n## ")
	return strings.TrimSpace(body)
}

// The plan is the latest state of the agent's todo list, whatever client
// wrote it (Claude Code TodoWrite, Codex update_plan, Gemini write_todos,
// OpenCode todowrite), its steps marked; the current task names the step
// in progress and how many are open.
func TestExtractivePlanLatestStateWins(t *testing.T) {
	for _, tc := range []struct{ name, first, latest string }{
		{"TodoWrite", `{"todos":[{"content":"Read the parser","status":"in_progress","activeForm":"Reading"},{"content":"Fix minutes","status":"pending","activeForm":"Fixing"},{"content":"Run the tests","status":"pending","activeForm":"Running"}]}`,
			`{"todos":[{"content":"Read the parser","status":"completed","activeForm":"Reading"},{"content":"Fix minutes","status":"in_progress","activeForm":"Fixing"},{"content":"Run the tests","status":"pending","activeForm":"Running"}]}`},
		{"update_plan", `"{\"plan\":[{\"step\":\"Read the parser\",\"status\":\"in_progress\"},{\"step\":\"Fix minutes\",\"status\":\"pending\"},{\"step\":\"Run the tests\",\"status\":\"pending\"}]}"`,
			`"{\"explanation\":\"parser read\",\"plan\":[{\"step\":\"Read the parser\",\"status\":\"completed\"},{\"step\":\"Fix minutes\",\"status\":\"in_progress\"},{\"step\":\"Run the tests\",\"status\":\"pending\"}]}"`},
		{"write_todos", `{"todos":[{"description":"Read the parser","status":"in_progress"},{"description":"Fix minutes","status":"pending"},{"description":"Run the tests","status":"pending"}]}`,
			`{"todos":[{"description":"Read the parser","status":"completed"},{"description":"Fix minutes","status":"in_progress"},{"description":"Run the tests","status":"pending"}]}`},
		{"todowrite", `{"todos":[{"content":"Read the parser","status":"in_progress","priority":"high","id":"1"},{"content":"Fix minutes","status":"pending","priority":"high","id":"2"},{"content":"Run the tests","status":"pending","priority":"low","id":"3"}]}`,
			`{"todos":[{"content":"Read the parser","status":"completed","priority":"high","id":"1"},{"content":"Fix minutes","status":"in_progress","priority":"high","id":"2"},{"content":"Run the tests","status":"pending","priority":"low","id":"3"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := summarizeNodes(t, "",
				transcript.Node{ID: "u1", Role: transcript.RoleUser, Content: transcript.TextContent("Fix ParseDuration for 90m.")},
				todoCall("a1", tc.name, tc.first), todoResult("t1", "ca1"),
				transcript.Node{ID: "u2", Role: transcript.RoleUser, Content: transcript.TextContent("Also handle negative values like -5m.")},
				todoCall("a2", tc.name, tc.latest), todoResult("t2", "ca2"),
				transcript.Node{ID: "u3", Role: transcript.RoleUser, Content: transcript.TextContent("continue")},
				transcript.Node{ID: "a3", Role: transcript.RoleAssistant, Content: transcript.TextContent("Working on it.")},
			)
			if p := section(got, "Plan"); p != "- [x] Read the parser\n- [>] Fix minutes\n- [ ] Run the tests" {
				t.Errorf("plan %q:\n%s", p, got)
			}
			// "continue" is no task: the request before it is (listed
			// under User requests, so named by its id).
			if task := section(got, "Current task"); task != "Request: the one of the User requests marked [u2]\nIn progress: Fix minutes\nOpen: 2 of 3 plan steps" {
				t.Errorf("current task %q:\n%s", task, got)
			}
			if strings.Contains(got, "status") || strings.Contains(got, "## Other tool calls") {
				t.Errorf("the todo call's JSON reached the summary:\n%s", got)
			}
			if strings.Index(got, "## Current task") > strings.Index(got, "## Plan") || strings.Index(got, "## Plan") > strings.Index(got, "## User requests") {
				t.Errorf("sections out of order:\n%s", got)
			}
		})
	}
}

// A step a later, non-empty plan no longer lists without having done it,
// or marks cancelled, is a rejected approach; a list emptied once all is
// done is no abandonment.
func TestExtractivePlanDroppedSteps(t *testing.T) {
	got := summarizeNodes(t, "",
		transcript.Node{ID: "u1", Role: transcript.RoleUser, Content: transcript.TextContent("Speed up the importer.")},
		todoCall("a1", "TodoWrite", `{"todos":[{"content":"Cache the parsed lines","status":"in_progress"},{"content":"Parse in parallel","status":"pending"},{"content":"Use mmap","status":"pending"}]}`), todoResult("t1", "ca1"),
		todoCall("a2", "TodoWrite", `{"todos":[{"content":"Cache the parsed lines","status":"completed"},{"content":"Use mmap","status":"cancelled"},{"content":"Stream the lines","status":"in_progress"}]}`), todoResult("t2", "ca2"),
	)
	rej := section(got, "Rejected approaches")
	for _, want := range []string{"dropped from the plan: Parse in parallel", "dropped from the plan: Use mmap"} {
		if !strings.Contains(rej, want) {
			t.Errorf("rejected approaches lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(rej, "Cache the parsed lines") {
		t.Errorf("a done step is rejected:\n%s", got)
	}
	cleared := summarizeNodes(t, "",
		transcript.Node{ID: "u1", Role: transcript.RoleUser, Content: transcript.TextContent("Speed up the importer.")},
		todoCall("a1", "TodoWrite", `{"todos":[{"content":"Cache the parsed lines","status":"completed"},{"content":"Stream the lines","status":"in_progress"}]}`), todoResult("t1", "ca1"),
		todoCall("a2", "TodoWrite", `{"todos":[]}`), todoResult("t2", "ca2"),
	)
	if strings.Contains(cleared, "dropped from the plan") {
		t.Errorf("an emptied list counts as abandoned:\n%s", cleared)
	}
}

// A decision is kept with its reason; an announced next step ("I'll add
// a flag.") is none.
func TestExtractiveDecisionsCarryTheirReason(t *testing.T) {
	got := summarizeNodes(t, "",
		transcript.Node{ID: "u1", Role: transcript.RoleUser, Content: transcript.TextContent("Store the sessions somewhere durable.")},
		transcript.Node{ID: "a1", Role: transcript.RoleAssistant, Content: transcript.TextContent(
			"I'll use SQLite because it needs no server. I'll add a flag. We decided on WAL mode. I will add an index. This keeps lookups by id fast. Found it: the lock is held across the fsync. I'll release it before syncing.")},
	)
	dec := section(got, "Key decisions")
	for _, want := range []string{
		"- I'll use SQLite because it needs no server.",
		"- We decided on WAL mode.",
		"- I will add an index. This keeps lookups by id fast.",
		"- Found it: the lock is held across the fsync. I'll release it before syncing.",
	} {
		if !strings.Contains(dec, want) {
			t.Errorf("decisions lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(dec, "add a flag") {
		t.Errorf("a next step is listed as a decision:\n%s", got)
	}
}

// A change a later turn reverted is a rejected approach.
func TestExtractiveRevertedChangeIsRejected(t *testing.T) {
	facts := []audit.Fact{
		{Kind: audit.KindChange, Text: "internal/cache/lru.go → NewLRU, Get (reverted)", NodeIDs: []string{"a4"}},
		{Kind: audit.KindChange, Text: "internal/cache/map.go → NewMap", NodeIDs: []string{"a6"}},
	}
	nodes := sessiontest.Pointers([]transcript.Node{{ID: "u1", Role: transcript.RoleUser, Content: transcript.TextContent("Add a cache.")}})
	got, err := Extractive{}.Summarize(context.Background(), Request{Nodes: nodes, Facts: facts, MaxTokens: 2000})
	if err != nil {
		t.Fatal(err)
	}
	rej := section(got, "Rejected approaches")
	if rej != "- the change to internal/cache/lru.go (NewLRU, Get) was reverted" {
		t.Errorf("rejected approaches %q:\n%s", rej, got)
	}
}

// A re-compaction keeps the plan and the task of the previous summary
// when the new turns change neither, and replaces the plan with a newer
// state.
func TestExtractiveStateMerges(t *testing.T) {
	first := summarizeNodes(t, "",
		transcript.Node{ID: "u1", Role: transcript.RoleUser, Content: transcript.TextContent("Port the CLI to cobra.")},
		transcript.Node{ID: "u2", Role: transcript.RoleUser, Content: transcript.TextContent("Keep the old flags working.")},
		todoCall("a1", "TodoWrite", `{"todos":[{"content":"Move the commands","status":"in_progress"},{"content":"Alias the old flags","status":"pending"}]}`), todoResult("t1", "ca1"),
	)
	second := summarizeNodes(t, first,
		transcript.Node{ID: "a2", Role: transcript.RoleAssistant, Content: transcript.TextContent("Commands moved.")},
	)
	if section(second, "Plan") != section(first, "Plan") || section(second, "Current task") != section(first, "Current task") || section(first, "Plan") == "" {
		t.Errorf("state not carried:\n%s\n----\n%s", first, second)
	}
	third := summarizeNodes(t, second,
		todoCall("a3", "TodoWrite", `{"todos":[{"content":"Move the commands","status":"completed"},{"content":"Alias the old flags","status":"in_progress"}]}`), todoResult("t3", "ca3"),
	)
	if p := section(third, "Plan"); p != "- [x] Move the commands\n- [>] Alias the old flags" {
		t.Errorf("plan %q:\n%s", p, third)
	}
	if task := section(third, "Current task"); !strings.HasPrefix(task, "Request: the one of the User requests marked [u2]\nIn progress: Alias the old flags") {
		t.Errorf("current task %q:\n%s", task, third)
	}
}

// The Current task names the latest request without quoting it again when
// the User requests list quotes it (with the same id).
func TestExtractiveTaskPointsAtListedRequest(t *testing.T) {
	got := summarizeNodes(t, "",
		transcript.Node{ID: "u1", Role: transcript.RoleUser, Content: transcript.TextContent("Port the CLI to cobra.")},
		transcript.Node{ID: "u2", Role: transcript.RoleUser, Content: transcript.TextContent("Now add shell completion for bash and zsh.")},
	)
	if task := section(got, "Current task"); task != "Request: the one of the User requests marked [u2]" {
		t.Errorf("current task %q:\n%s", task, got)
	}
	if list := section(got, "User requests"); !strings.Contains(list, "Now add shell completion for bash and zsh. [u2]") {
		t.Errorf("the request is not listed with its id:\n%s", got)
	}
	if n := strings.Count(got, "shell completion for bash"); n > 2 {
		t.Errorf("the request is quoted %d times:\n%s", n, got)
	}
}

// The state sections spend what the facts leave of the ceiling and never
// take the summary past it: a huge plan is cut, every fact stays.
func TestExtractiveStateWithinTheCeiling(t *testing.T) {
	var steps []string
	for i := range 200 {
		steps = append(steps, `{"content":"step `+strings.Repeat("long words ", 20)+string(rune('a'+i%26))+`","status":"pending"}`)
	}
	nodes := sessiontest.Pointers([]transcript.Node{
		{ID: "u1", Role: transcript.RoleUser, Content: transcript.TextContent("Run go test ./store and fix what fails.")},
		todoCall("a1", "TodoWrite", `{"todos":[`+strings.Join(steps, ",")+`]}`), todoResult("t1", "ca1"),
	})
	const ceiling = 600
	got, err := Extractive{}.Summarize(context.Background(), Request{Nodes: nodes, MaxTokens: 300, Ceiling: ceiling})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := estimate.Text(estimate.O200kBase, got)
	if n > ceiling || !strings.Contains(got, "## Plan\n") {
		t.Errorf("%d tokens (ceiling %d), plan kept: %v\n%s", n, ceiling, strings.Contains(got, "## Plan"), got)
	}
	for _, f := range audit.Extract(nodes, nil) {
		if !audit.NewMatcher(got).Has(f) {
			t.Errorf("fact lost: %s %q", f.Kind, f.Text)
		}
	}
}

// The model summarizers are asked for the same state sections as the
// extractive summary writes, the plan's marks and a decision's reason.
func TestPromptAsksForTheState(t *testing.T) {
	p := Prompt(Request{MaxTokens: 500})
	for _, want := range []string{"- Objective\n- Current task\n- Plan\n", `"[x]" done, "[>]" in progress, "[ ]" open`, "each decision with\n  its reason"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
}
