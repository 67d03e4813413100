package audit

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// session writes nodes into a new session and opens its graph.
func session(t *testing.T, nodes []transcript.Node) *dag.Graph {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "s")
	if _, err := store.Init(dir, "gpt-4o", store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Update(context.Background(), dir, store.WriteOptions{}, func(tx *store.Tx) error {
		_, err := tx.Append(nodes, store.AppendOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.S.Close() })
	return g
}

func TestRunCountsCallerSubtreesAndTheKeptTail(t *testing.T) {
	summary := transcript.Node{ID: "summary_1", Role: transcript.SummaryRole, Name: transcript.SummaryName,
		Content: transcript.TextContent(transcript.SummaryPrefix + "## Objective\nRun the build.\n")}
	summary.SetMeta("compaction", true)
	summary.SetMeta("covers_ids", []string{"u1", "a1"})
	g := session(t, []transcript.Node{
		{ID: "u1", Role: transcript.RoleUser, Content: transcript.TextContent("Run the build. Always use make.")},
		{ID: "a1", Predecessor: "u1", Role: transcript.RoleAssistant, Content: transcript.TextContent("Delegating to a sub-agent.")},
		// The sub-agent a1 spawned: its own chain, its "user" the agent.
		{ID: "s1", Caller: "a1", Role: transcript.RoleUser, Content: transcript.TextContent("Your task is to build the project. Never ask questions.")},
		{ID: "s2", Predecessor: "s1", Role: transcript.RoleAssistant, Content: transcript.TextContent(""),
			ToolCalls: []transcript.ToolCall{{ID: "k1", Name: "Bash", Arguments: []byte(`{"command":"make build"}`)}}},
		{ID: "u2", Predecessor: "a1", Role: transcript.RoleUser, Content: transcript.TextContent("And now?")},
		{ID: "a2", Predecessor: "u2", Role: transcript.RoleAssistant, Content: transcript.TextContent("Done: make build passed.")},
		summary,
	})
	res, err := Run(context.Background(), g, Options{Pinned: map[string]bool{"u1": true}})
	if err != nil {
		t.Fatal(err)
	}
	r := res[0]
	if r.CoveredNodes != 2 || r.SubtreeNodes != 2 || !r.OnHeadBranch || r.Source != "ctxfold" || r.Status != "active" {
		t.Fatalf("result %+v", r)
	}
	kept := map[string]bool{}
	for _, f := range r.Facts {
		kept[string(f.Kind)+":"+f.Text] = f.Kept
	}
	want := map[string]bool{
		"request:Run the build.":       true,  // the summary says it
		"instruction:Always use make.": false, // nobody does
		"command:make build":           true,  // the sub-agent ran it; the kept tail a2 says it
	}
	for k, w := range want {
		got, ok := kept[k]
		if !ok || got != w {
			t.Errorf("fact %s: present %v kept %v, want kept %v (facts %v)", k, ok, got, w, r.Facts)
		}
	}
	for k := range kept {
		if k == "request:Your task is to build the project." || k == "instruction:Never ask questions." {
			t.Errorf("a sub-agent's prompt became the user's %s", k)
		}
	}
	if r.Pinned == nil || r.Pinned.Total != 2 || r.Pinned.Kept != 1 || len(r.PinnedNodes) != 1 || r.PinnedNodes[0].Kept {
		t.Errorf("pinned u1: %+v %+v", r.Pinned, r.PinnedNodes)
	}
	if r.Total != 3 || r.Kept != 2 || r.SurvivalPct != 66.6 {
		t.Errorf("survival %d/%d %.1f%%", r.Kept, r.Total, r.SurvivalPct)
	}
}

// A summary an importer made from a client's record names that client.
func TestSourceOfAnImportedSummary(t *testing.T) {
	n := &transcript.Node{ID: "summary_x"}
	n.SetMeta("source", "codex compacted record")
	if got := source(n); got != "codex" {
		t.Fatalf("source %q", got)
	}
	// A newer client needs no case here: its importer names the record.
	c := &transcript.Node{ID: "summary_c"}
	c.SetMeta("source", "copilot session.compaction_complete")
	if got := source(c); got != "copilot" {
		t.Fatalf("source %q", got)
	}
	if got := source(&transcript.Node{ID: "summary_y"}); got != "ctxfold" {
		t.Fatalf("source %q", got)
	}
	d := &transcript.Node{ID: "summary_z"}
	d.SetMeta("source", "droid compaction_state")
	if got := source(d); got != "droid" {
		t.Fatalf("source %q, want the name's first word", got)
	}
}

// TestReadTextOnce: a tool node of the OpenAI layout (role tool, its text
// the result) reads as its text once, as the model read it; an Anthropic
// tool_result block still reads.
func TestReadTextOnce(t *testing.T) {
	var b strings.Builder
	ReadText(&b, &transcript.Node{ID: "t1", Role: transcript.RoleTool, ToolCallID: "c1", Content: transcript.Content{Text: "checkpoint-42-reached"}})
	if got := strings.TrimSpace(b.String()); got != "checkpoint-42-reached" {
		t.Errorf("tool node reads %q, want its text once", got)
	}
	b.Reset()
	ReadText(&b, result("r1", "c1", "exit 2: no such file", true))
	if got := strings.TrimSpace(b.String()); got != "exit 2: no such file" {
		t.Errorf("tool_result block reads %q", got)
	}
}

// Issue 44 item 13: after ctxfold's hook injected the facts a summary
// dropped, audit does not count them as kept by the summary: it says
// which facts only the injection carries.
func TestRunInjectionIsNotTheSummarysWork(t *testing.T) {
	summary := transcript.Node{ID: "summary_1", Role: transcript.SummaryRole, Name: transcript.SummaryName,
		Content: transcript.TextContent(transcript.SummaryPrefix + "## Objective\nRun the build.\n")}
	summary.SetMeta("compaction", true)
	summary.SetMeta("covers_ids", []string{"u1", "a1"})
	inject := "<system-reminder>\nctxfold: claude-code's compaction summary dropped 1 of the 2 facts of the turns it folded; " +
		"the dropped facts follow.\n- instruction [u1]: Always use make.\n</system-reminder>"
	g := session(t, []transcript.Node{
		{ID: "u1", Role: transcript.RoleUser, Content: transcript.TextContent("Run the build. Always use make.")},
		{ID: "a1", Predecessor: "u1", Role: transcript.RoleAssistant, Content: transcript.TextContent("Starting.")},
		{ID: "u2", Predecessor: "a1", Role: transcript.RoleUser, Content: transcript.TextContent("And now?")},
		{ID: "a2", Predecessor: "u2", Role: transcript.RoleAssistant, Content: transcript.TextContent("Done.")},
		summary,
		{ID: "inj", Predecessor: "a2", Role: transcript.RoleUser, Content: transcript.TextContent(inject)},
	})
	res, err := Run(context.Background(), g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := res[0]
	if len(r.InjectedIDs) != 1 || r.InjectedIDs[0] != "inj" || r.Injected != 1 {
		t.Fatalf("injected %v (%d)", r.InjectedIDs, r.Injected)
	}
	for _, f := range r.Facts {
		if f.Text == "Always use make." && (f.Kept || !f.Injected) {
			t.Errorf("the injected instruction: %+v", f)
		}
		if f.Text == "Run the build." && (!f.Kept || f.Injected) {
			t.Errorf("the summary's request: %+v", f)
		}
	}
	if r.Kind(KindInstruction).Kept != 0 {
		t.Errorf("instructions kept: %+v", r.Kind(KindInstruction))
	}
}
