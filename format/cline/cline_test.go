package cline_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/format/cline"
	"github.com/ctxfold/ctxfold/internal/importtest"
	"github.com/ctxfold/ctxfold/transcript"
)

const dir = "testdata/tasks/"

func TestTasks(t *testing.T) {
	var tg importtest.Target
	if err := cline.Import(context.Background(), []string{dir}, cline.Options{}, &tg); err != nil {
		t.Fatal(err)
	}
	if len(tg.Convs) != 2 {
		t.Fatalf("%d conversations", len(tg.Convs))
	}
	c := tg.Convs[0]
	if c.Name != "1733412345678" || c.Model != "claude-3-5-sonnet-20241022" {
		t.Errorf("name %q model %q", c.Name, c.Model)
	}
	// XML tools are text, as the model read them: no tool calls.
	if got, want := importtest.StatsOf(c.Nodes), (importtest.Stats{Nodes: 6, User: 3, Assistant: 3}); got != want {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
	// Requests in order, one per assistant message; the whole prompt is
	// tokensIn plus the cache reads and writes.
	for i, want := range []int64{4 + 10543, 6 + 480 + 10543, 5 + 300 + 11023} {
		u := c.Nodes[2*i+1].Usage
		if u == nil || u.InputTokens != want {
			t.Errorf("assistant %d usage %+v, want input %d", i, u, want)
		}
	}
	if u := c.Nodes[3].Usage; u.CachedInputTokens != 10543 || u.OutputTokens != 240 || string(u.Extra["cache_write_tokens"]) != "480" {
		t.Errorf("usage fields %+v", u)
	}
	img := c.Nodes[4].Content.Blocks[2]
	if img.Type != transcript.BlockImage || !strings.HasPrefix(img.Source, "sha256:") {
		t.Errorf("image block %+v: the bytes must become a digest", img)
	}

	c = tg.Convs[1]
	if got, want := importtest.StatsOf(c.Nodes), (importtest.Stats{Nodes: 5, Summaries: 1, User: 2, Assistant: 2, Calls: 1, Results: 1}); got != want {
		t.Fatalf("native tools: stats %+v, want %+v", got, want)
	}
	if c.Model != "claude-sonnet-4-20250514" || c.Nodes[1].CreatedAt != "2025-06-15T15:06:41.5Z" {
		t.Errorf("model %q created_at %q", c.Model, c.Nodes[1].CreatedAt)
	}
	// conversationHistoryIndex places each usage: the unfinished request is
	// skipped, the failed one has no message of its own.
	if u := c.Nodes[1].Usage; u == nil || u.InputTokens != 1200 {
		t.Errorf("first request %+v", u)
	}
	if u := c.Nodes[3].Usage; u == nil || u.InputTokens != 1350 || u.OutputTokens != 140 {
		t.Errorf("second request %+v", u)
	}
	if r := c.Nodes[2].ToolResults(); len(r) != 1 || !strings.Contains(r[0].Text, "FAIL: TestParse") {
		t.Errorf("tool result %+v", r)
	}
	// The truncation [1, 2] drops the call and its result from what Cline
	// sends: a summary node in their place.
	sum := c.Nodes[4]
	if !sum.IsSummary() || strings.Join(sum.CoversIDs(), " ") != c.Nodes[1].ID+" "+c.Nodes[2].ID || sum.Predecessor != c.Nodes[0].ID {
		t.Errorf("truncation summary %+v", sum)
	}
	counts := c.Counts
	for k, want := range map[[2]string]int{
		{"ui/say/api_req_started", transcript.OutcomeMerged}:  2,
		{"ui/say/api_req_started", transcript.OutcomeSkipped}: 2,
		{"ui/ask/command", transcript.OutcomeSkipped}:         1,
		{"message/user", transcript.OutcomeImported}:          2,
	} {
		if counts[k] != want {
			t.Errorf("count %v = %d, want %d", k, counts[k], want)
		}
	}
}

func TestDetect(t *testing.T) {
	head, _ := os.ReadFile(dir + "1750000000000/api_conversation_history.json")
	if !cline.Detect(head) || !cline.DetectPath(dir+"1750000000000") || !cline.DetectPath(dir) || !cline.DetectPath("x/api_conversation_history.json") {
		t.Error("a Cline task is not detected")
	}
	if cline.Detect([]byte(`[{"role":"user","content":"hi"}]`)) || cline.DetectPath("testdata") {
		t.Error("an OpenAI messages array, or a directory of no task, taken for Cline")
	}
	if why := cline.Near("testdata/ui-only", nil); !strings.Contains(why, "no api_conversation_history.json") {
		t.Errorf("near %q", why)
	}
	err := cline.Import(context.Background(), []string{"testdata/ui-only"}, cline.Options{}, &importtest.Target{})
	var pe *transcript.ParseError
	if !errors.As(err, &pe) {
		t.Errorf("ui-only: %v", err)
	}
}

func TestOrphanResultKeptAsText(t *testing.T) {
	path := t.TempDir() + "/api_conversation_history.json"
	os.WriteFile(path, []byte(`[{"role":"user","content":[{"type":"tool_result","tool_use_id":"gone","content":"late"}]},{"role":"assistant","content":"ok"}]`), 0o644)
	var tg importtest.Target
	if err := cline.Import(context.Background(), []string{path}, cline.Options{}, &tg); err != nil {
		t.Fatal(err)
	}
	c := tg.Convs[0]
	if len(c.Warnings) != 1 || len(c.Nodes[0].ToolResults()) != 0 || !strings.Contains(c.Nodes[0].Content.PlainText(), "late") {
		t.Errorf("warnings %v, content %q", c.Warnings, c.Nodes[0].Content.PlainText())
	}
}

func FuzzImport(f *testing.F) {
	importtest.Fuzz(f, dir, []string{"1733412345678/api_conversation_history.json", "1750000000000/api_conversation_history.json"}, "api_conversation_history.json", cline.Import)
}

// Older Cline wrote a request's counts in api_req_finished; newer ones name
// the model on the UI message.
func TestAPIReqFinished(t *testing.T) {
	d := t.TempDir() + "/1700000000000"
	os.Mkdir(d, 0o755)
	os.WriteFile(d+"/api_conversation_history.json", []byte(`[{"role":"user","content":[{"type":"text","text":"<task>\nhi\n</task>"}]},{"role":"assistant","content":[{"type":"text","text":"Hello."}]}]`), 0o644)
	os.WriteFile(d+"/ui_messages.json", []byte(`[{"ts":1,"type":"say","say":"api_req_started","text":"{\"request\":\"<task>hi</task>\"}","modelInfo":{"providerId":"anthropic","modelId":"claude-3-opus-20240229"}},
{"ts":2,"type":"say","say":"api_req_finished","text":"{\"tokensIn\":900,\"tokensOut\":12,\"cacheWrites\":0,\"cacheReads\":0,\"cost\":0.01}"}]`), 0o644)
	var tg importtest.Target
	if err := cline.Import(context.Background(), []string{d}, cline.Options{}, &tg); err != nil {
		t.Fatal(err)
	}
	c := tg.Convs[0]
	if u := c.Nodes[1].Usage; u == nil || u.InputTokens != 900 || c.Model != "claude-3-opus-20240229" {
		t.Errorf("usage %+v model %q", u, c.Model)
	}
	if c.Counts[[2]string{"ui/say/api_req_finished", transcript.OutcomeMerged}] != 1 || c.Counts[[2]string{"ui/say/api_req_started", transcript.OutcomeSkipped}] != 1 {
		t.Errorf("counts %v", c.Counts)
	}
}

// TestDetectBlank: whitespace alone is not a history, and never a panic.
func TestDetectBlank(t *testing.T) {
	for _, head := range []string{"", "\n\n  \n", "[", "[ ", "  [\n"} {
		if cline.Detect([]byte(head)) {
			t.Errorf("%q detected as a Cline history", head)
		}
	}
}

// TestTruncationKeepsToolGroupWhole: a deleted range that ends at a tool
// call takes its results too (docs/FORMAT.md §2, tool-call adjacency), so
// the summary never separates them.
func TestTruncationKeepsToolGroupWhole(t *testing.T) {
	d := t.TempDir() + "/1760000000000"
	os.Mkdir(d, 0o755)
	os.WriteFile(d+"/api_conversation_history.json", []byte(`[{"role":"user","content":[{"type":"text","text":"<task>\nfix it\n</task>"}]},
{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"execute_command","input":{"command":"make"}}]},
{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"},{"type":"text","text":"<environment_details>x</environment_details>"}]},
{"role":"assistant","content":[{"type":"text","text":"Done."}]},
{"role":"user","content":[{"type":"text","text":"thanks"}]}]`), 0o644)
	os.WriteFile(d+"/ui_messages.json", []byte(`[{"ts":1,"type":"say","say":"api_req_started","text":"{\"tokensIn\":10}","conversationHistoryIndex":3,"conversationHistoryDeletedRange":[1,1]}]`), 0o644)
	var tg importtest.Target
	if err := cline.Import(context.Background(), []string{d}, cline.Options{}, &tg); err != nil {
		t.Fatal(err)
	}
	c := tg.Convs[0]
	var sum *transcript.Node
	for k := range c.Nodes {
		if c.Nodes[k].IsSummary() {
			sum = &c.Nodes[k]
		}
	}
	if sum == nil || strings.Join(sum.CoversIDs(), " ") != c.Nodes[1].ID+" "+c.Nodes[2].ID {
		t.Fatalf("truncation summary %+v, want it to cover the call %q and its result %q", sum, c.Nodes[1].ID, c.Nodes[2].ID)
	}
}
