package summarize

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/transcript"
)

func extractiveFixture() []*transcript.Node {
	return sessiontest.Pointers([]transcript.Node{
		{ID: "u1", Role: transcript.RoleUser, Content: transcript.TextContent("Migrate cmd/server/main.go to the new config loader. Never commit secrets to config/prod.yaml. Which Go version do we target?")},
		{ID: "a1", Role: transcript.RoleAssistant, Content: transcript.TextContent("I'll read the loader first. We'll switch to a single Load function. Should I keep the old flags?"),
			ToolCalls: []transcript.ToolCall{
				{ID: "c1", Name: "read_file", Arguments: json.RawMessage(`{"path":"internal/config/loader.go"}`)},
				{ID: "c2", Name: "bash", Arguments: json.RawMessage(`{"cmd":"go build ./... && go test ./internal/config"}`)},
			}},
		{ID: "t1", Role: transcript.RoleTool, ToolCallID: "c1", Content: transcript.TextContent(strings.Repeat("package config // long file\n", 400))},
		{ID: "t2", Role: transcript.RoleTool, ToolCallID: "c2", Content: transcript.TextContent("internal/config/loader_test.go:17: undefined: LoadEnv\nFAIL\tgithub.com/acme/app/internal/config")},
		{ID: "a2", Role: transcript.RoleAssistant, Content: transcript.Content{IsBlocks: true, Blocks: []transcript.Block{
			{Type: transcript.BlockText, Text: "Rather than patching LoadEnv, I rewrote it. The envconfig approach didn't work."},
			{Type: transcript.BlockToolCall, ID: "c3", Name: "edit_file", Arguments: json.RawMessage(`{"path":"internal/config/loader.go","old":"a","new":"b"}`)},
		}}},
		{ID: "t3", Role: transcript.RoleTool, ToolCallID: "c3", Content: transcript.TextContent("edited")},
		{ID: "u2", Role: transcript.RoleUser, Content: transcript.Content{IsBlocks: true, Blocks: []transcript.Block{
			{Type: transcript.BlockText, Text: "Here is the diagram; keep the public API stable."},
			{Type: transcript.BlockImage, Source: "sha256:ab12", MediaType: "image/png"},
		}}},
	})
}

func TestExtractiveSections(t *testing.T) {
	got, err := Extractive{}.Summarize(context.Background(), Request{Nodes: extractiveFixture(), MaxTokens: 2000})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## Objective\nMigrate cmd/server/main.go to the new config loader. Never commit secrets to config/prod.yaml. Which Go version do we target?",
		"## Files and paths\n- ./internal/config [a1]\n- cmd/server/main.go [u1]\n- config/prod.yaml [u1]\n",
		"## Files changed\n- internal/config/loader.go [a2]",
		"## Commands run\n- go build ./... && go test ./internal/config [a1]",
		"## Key decisions\n- We'll switch to a single Load function.\n- Rather than patching LoadEnv, I rewrote it.\n\n",
		"## Rejected approaches\n- The envconfig approach didn't work.",
		`- "Never commit secrets to config/prod.yaml." [u1]`,
		`- "Here is the diagram; keep the public API stable." [u2]`,
		"## Errors and failing tests\n- internal/config/loader_test.go:17: undefined: LoadEnv [t2]\n- FAIL github.com/acme/app/internal/config [t2]",
		"## Open questions\n- Should I keep the old flags?",
		"## Latest user request\nHere is the diagram; keep the public API stable.",
		"[image image/png: sha256:ab12 — media reference only; not shown to the summarizer]",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "- I'll read the loader first.") {
		t.Error("an announced look became a key decision")
	}
	if strings.Contains(got, "package config // long file") {
		t.Error("tool output that is not an error line reached the summary")
	}
	again, _ := Extractive{}.Summarize(context.Background(), Request{Nodes: extractiveFixture(), MaxTokens: 2000})
	if again != got {
		t.Error("the extractive summary is not deterministic")
	}
}

func TestExtractiveFitsTheCap(t *testing.T) {
	nodes := sessiontest.Pointers(sessiontest.Generate(sessiontest.NewRand(), 40))
	for _, cap := range []int{120, 400, 1500} {
		got, err := Extractive{}.Summarize(context.Background(), Request{Nodes: nodes, MaxTokens: cap})
		if err != nil {
			t.Fatal(err)
		}
		n, _ := estimate.Text(estimate.O200kBase, got)
		if n > cap {
			t.Errorf("cap %d: summary is %d tokens", cap, n)
		}
		if !strings.Contains(got, "## Objective\nTurn 0:") {
			t.Errorf("cap %d: the objective was dropped:\n%s", cap, got)
		}
	}
}

func TestTranscriptClipsToolOutput(t *testing.T) {
	out := Transcript(extractiveFixture())
	if strings.Count(out, "package config // long file") > 40 || !strings.Contains(out, "bytes clipped") {
		t.Fatalf("tool output not clipped:\n%s", out)
	}
	if !strings.Contains(out, "[image image/png: sha256:ab12 — media reference only; not shown to the summarizer]") {
		t.Fatalf("media is not a reference notice:\n%s", out)
	}
	if !strings.Contains(out, "-> call read_file {\"path\":\"internal/config/loader.go\"} (id c1)") {
		t.Fatalf("tool call missing:\n%s", out)
	}
}
