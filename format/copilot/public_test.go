package copilot_test

import (
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/transcript"
)

// publicSample is an excerpt of a real public Copilot CLI 1.0.55-1 log
// (provenance and what was shortened: fixtures/import/copilot/README.md).
const publicSample = "../../fixtures/import/copilot/public-copilot-session-viewer-demo.jsonl"

// TestPublicSample: the real log imports with every event either a node
// or counted with its reason, its sub-agent as a chain called by the
// node whose task call started it, and no warning.
func TestPublicSample(t *testing.T) {
	c, err := load(t, publicSample)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]transcript.Node{}
	var order []string
	for _, n := range c.Nodes {
		byID[n.ID] = n
		order = append(order, n.ID[:min(8, len(n.ID))])
	}
	if got := strings.Join(order, " "); got != "system 1280bab1 ce8f22c2 3736b35d c7e90aa5 53518f94 88c56800 36587e79 7cb6ee95 e5bd8d33 c5db6ef0 eedc9548" {
		t.Fatalf("nodes %s", got)
	}
	if c.Name != "030f200c-c26f-4ef0-9099-6d1156c83631" || c.Head != "eedc9548-79b6-470a-bdca-4a38adafed19" || c.Model != "claude-opus-4.7-1m-internal" {
		t.Errorf("name %q head %q model %q", c.Name, c.Head, c.Model)
	}
	if len(c.Warnings) != 0 {
		t.Errorf("warnings %q", c.Warnings)
	}
	task := "c7e90aa5-a166-457e-b780-b8b51be77256"
	if a := byID[task]; len(a.ToolCalls) != 2 || a.ToolCalls[1].Name != "task" {
		t.Fatalf("task call %+v", a.ToolCalls)
	}
	// The sub-agent's messages and results (its events carry agentId)
	// are its own chain, called by the task call's node; the call's
	// result continues the session's chain.
	sub := []string{"88c56800-2576-4055-82b2-b978629a5b18", "36587e79-909d-4dfd-be99-8c563ca06756", "7cb6ee95-1c1c-456b-a904-adc173d4aa05", "e5bd8d33-66b7-4264-bb58-114e557f2a52"}
	for i, id := range sub {
		n := byID[id]
		if n.Caller != task || (i > 0 && n.Predecessor != sub[i-1]) {
			t.Errorf("%s: caller %q after %q", id, n.Caller, n.Predecessor)
		}
	}
	if r := byID["c5db6ef0-021e-4abf-ae1c-faf612995e7e"]; r.Caller != "" || r.Predecessor != "53518f94-2b21-45e6-9bc0-6b350b5edc00" ||
		r.ToolCallID != "toolu_vrtx_01TxUTxpA98CaQcbRogpf822" || !strings.HasPrefix(r.Content.Text, "- Lines in hello.py: 6") {
		t.Errorf("task result %+v", r)
	}
	if a := byID["ce8f22c2-a2ed-4d6c-a8ef-d21cc19cb028"]; !a.Content.IsBlocks || a.Content.Blocks[0].Type != "thinking" || a.Content.Blocks[0].Signature == "" {
		t.Errorf("reasoning %+v", a.Content)
	}
	// Every event is accounted for: 12 nodes, the rest merged or skipped
	// with a reason (hooks, turn bookkeeping, tool starts, sub-agent
	// lifecycle, the shutdown's totals).
	events := 0
	for k, v := range c.Counts {
		events += v
		if k[1] == transcript.OutcomeSkipped && !strings.Contains("assistant.turn_start assistant.turn_end hook.start hook.end tool.execution_start subagent.started subagent.completed session.shutdown", k[0]) {
			t.Errorf("%s skipped %d", k[0], v)
		}
	}
	if events != 34 {
		t.Errorf("%d events counted, the excerpt has 34", events)
	}
}

// TestLegacyCompaction: logs written before 1.0.35 (the shape the client
// itself stopped accepting, github/copilot-cli#2899) and up to 1.0.48
// (#3598: a negative tokensRemoved) carry no compactionAttemptId: their
// compaction_start holds only token counts and their compaction_complete
// pairs with the start before it. The shapes are those quoted from real
// logs in those reports and in third-party parsers' docs; the values are
// written for this test.
func TestLegacyCompaction(t *testing.T) {
	log := `{"type":"session.start","data":{"sessionId":"s-legacy","version":1,"producer":"copilot-agent","copilotVersion":"1.0.2","startTime":"2026-03-07T15:15:20.265Z","context":{"cwd":"/w"}},"id":"e1","timestamp":"2026-03-07T15:15:20.267Z","parentId":null}
{"type":"system.message","data":{"role":"system","content":"sys"},"id":"e2","timestamp":"2026-03-07T15:15:21.000Z","parentId":"e1"}
{"type":"user.message","data":{"content":"one","transformedContent":"one","attachments":[]},"id":"e3","timestamp":"2026-03-07T15:15:22.000Z","parentId":"e2"}
{"type":"assistant.message","data":{"messageId":"m1","content":"first","toolRequests":[],"outputTokens":3},"id":"e4","timestamp":"2026-03-07T15:15:23.000Z","parentId":"e3"}
{"type":"session.compaction_start","data":{"systemTokens":7800,"conversationTokens":82358,"toolDefinitionsTokens":12415},"id":"e5","timestamp":"2026-03-07T15:15:24.000Z","parentId":"e4"}
{"type":"session.compaction_complete","data":{"success":true,"preCompactionTokens":104405,"preCompactionMessagesLength":3,"summaryContent":"<overview>first</overview>","checkpointNumber":1,"checkpointPath":"/h/.copilot/session-state/s-legacy/checkpoints/001-first.md","compactionTokensUsed":{"input":9000,"output":300,"cachedInput":8000,"duration":4521},"requestId":"r1"},"id":"e6","timestamp":"2026-03-07T15:15:25.000Z","parentId":"e5"}
{"type":"user.message","data":{"content":"two","transformedContent":"two","attachments":[]},"id":"e7","timestamp":"2026-03-07T15:15:26.000Z","parentId":"e6"}
{"type":"assistant.message","data":{"messageId":"m2","content":"second","toolRequests":[],"outputTokens":3},"id":"e8","timestamp":"2026-03-07T15:15:27.000Z","parentId":"e7"}
{"type":"session.compaction_start","data":{"systemTokens":7800,"conversationTokens":424,"toolDefinitionsTokens":12415},"id":"e9","timestamp":"2026-03-07T15:15:28.000Z","parentId":"e8"}
{"type":"session.compaction_complete","data":{"success":true,"preCompactionTokens":427,"postCompactionTokens":663,"preCompactionMessagesLength":6,"messagesRemoved":5,"tokensRemoved":-236,"summaryContent":"<overview>second</overview>","checkpointNumber":2},"id":"e10","timestamp":"2026-03-07T15:15:29.000Z","parentId":"e9"}
{"type":"user.message","data":{"content":"three","transformedContent":"three","attachments":[]},"id":"e11","timestamp":"2026-03-07T15:15:30.000Z","parentId":"e10"}
`
	c, _, err := loadLog(t, log)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) != 0 {
		t.Errorf("warnings %q", c.Warnings)
	}
	var got []string
	for _, n := range c.Nodes {
		if strings.HasPrefix(n.ID, transcript.SummaryIDPrefix) {
			got = append(got, n.ID+"="+strings.Join(n.CoversIDs(), ","))
			if !strings.Contains(n.Content.Text, "<summary>\n<overview>") {
				t.Errorf("%s: %q", n.ID, n.Content.Text)
			}
		}
	}
	if strings.Join(got, " ") != "summary_e6=e3,e4 summary_e10=e3,e4,e7,e8" {
		t.Errorf("summaries %q", got)
	}
	if n := c.Counts[[2]string{"session.compaction_complete", transcript.OutcomeImported}]; n != 2 {
		t.Errorf("%d compactions imported", n)
	}
}

// TestUnfinishedCompaction: a real 2026-04 log (LAF-US/IDAHO-VAULT, read
// in place: docs/INTEROP-copilot.md) starts a second compaction that no
// session.compaction_complete follows before the session ends: the first
// start is merged into its summary, the second is counted skipped, with
// why, and replaces nothing.
func TestUnfinishedCompaction(t *testing.T) {
	log := `{"type":"session.start","data":{"sessionId":"s-open","version":1,"producer":"copilot-agent","copilotVersion":"unknown","startTime":"2026-04-02T04:30:00.000Z","context":{"cwd":"/w"}},"id":"e1","timestamp":"2026-04-02T04:30:00.000Z","parentId":null}
{"type":"user.message","data":{"content":"one","transformedContent":"one","attachments":[]},"id":"e3","timestamp":"2026-04-02T04:30:01.000Z","parentId":"e1"}
{"type":"assistant.message","data":{"messageId":"m1","content":"first","toolRequests":[],"outputTokens":3},"id":"e4","timestamp":"2026-04-02T04:30:02.000Z","parentId":"e3"}
{"type":"session.compaction_start","data":{"systemTokens":36736,"conversationTokens":35662,"toolDefinitionsTokens":39877},"id":"e5","timestamp":"2026-04-02T04:40:29.869Z","parentId":"e4"}
{"type":"session.compaction_complete","data":{"success":true,"preCompactionTokens":112275,"preCompactionMessagesLength":15,"summaryContent":"<overview>first</overview>","checkpointNumber":1,"compactionTokensUsed":{"input":176397,"output":1807,"cachedInput":0},"requestId":"r1"},"id":"e6","timestamp":"2026-04-02T04:40:40.000Z","parentId":"e5"}
{"type":"user.message","data":{"content":"two","transformedContent":"two","attachments":[]},"id":"e7","timestamp":"2026-04-02T04:41:00.000Z","parentId":"e6"}
{"type":"assistant.message","data":{"messageId":"m2","content":"second","toolRequests":[],"outputTokens":3},"id":"e8","timestamp":"2026-04-02T04:41:01.000Z","parentId":"e7"}
{"type":"session.compaction_start","data":{"systemTokens":36736,"conversationTokens":40112,"toolDefinitionsTokens":39877},"id":"e9","timestamp":"2026-04-02T04:50:00.000Z","parentId":"e8"}
{"type":"session.shutdown","data":{"shutdownType":"routine","totalPremiumRequests":2},"id":"e10","timestamp":"2026-04-02T04:50:05.000Z","parentId":"e9"}
`
	c, _, err := loadLog(t, log)
	if err != nil {
		t.Fatal(err)
	}
	var summaries []string
	for _, n := range c.Nodes {
		if strings.HasPrefix(n.ID, transcript.SummaryIDPrefix) {
			summaries = append(summaries, n.ID+"="+strings.Join(n.CoversIDs(), ","))
		}
	}
	if strings.Join(summaries, " ") != "summary_e6=e3,e4" {
		t.Errorf("summaries %q", summaries)
	}
	merged := c.Counts[[2]string{"session.compaction_start", transcript.OutcomeMerged}]
	skipped := c.Counts[[2]string{"session.compaction_start", transcript.OutcomeSkipped}]
	if merged != 1 || skipped != 1 {
		t.Errorf("compaction starts: %d merged, %d skipped; want 1 and 1", merged, skipped)
	}
}

// TestStreamOutput: what `copilot -p --output-format json` prints (the
// log's events and ephemeral streaming ones, no session.start) imports;
// the per-call model.call_* events are counted as the call's timing, not as
// a compaction's summarizer (what model.* means in events.jsonl).
func TestStreamOutput(t *testing.T) {
	c, err := load(t, "../../fixtures/import/copilot/stream.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, n := range c.Nodes {
		ids = append(ids, n.ID)
	}
	if got := strings.Join(ids, " "); got != "a03 a08 a10 a13" || len(c.Warnings) != 0 {
		t.Fatalf("nodes %s, warnings %q", got, c.Warnings)
	}
	for _, rec := range []string{"model.call_start", "model.call_finished"} {
		k := [2]string{rec, transcript.OutcomeSkipped}
		if c.Counts[k] != 1 || !strings.Contains(c.Reasons[k], "assistant.message that follows") {
			t.Errorf("%s: %d skipped, reason %q", rec, c.Counts[k], c.Reasons[k])
		}
	}
	if k := [2]string{"assistant.message_delta", transcript.OutcomeSkipped}; c.Counts[k] != 1 {
		t.Errorf("message_delta: %d skipped", c.Counts[k])
	}
}
