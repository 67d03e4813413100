package transcript

import (
	"encoding/json"
	"testing"
)

// TestCompactionEventBytes pins each kind's key set and order to the
// encoding events.jsonl has always had (maps, keys sorted), so sessions
// written before and after the type read the same.
func TestCompactionEventBytes(t *testing.T) {
	n := func(v int) *int { return &v }
	cases := []struct {
		ev   CompactionEvent
		want map[string]any
	}{
		{CompactionEvent{Type: EventCompactionStarted, At: "t", Summarizer: "s", TokensBefore: 0, Target: 7, Covering: 3},
			map[string]any{"type": EventCompactionStarted, "at": "t", "summarizer": "s", "tokens_before": 0, "target": 7, "covering": 3}},
		{CompactionEvent{Type: EventCompactionFinished, At: "t", NoOp: true, Reason: "r", SummarisedCount: n(0), TokensBefore: 5, TokensAfter: 5, Summarizer: "s"},
			map[string]any{"type": EventCompactionFinished, "at": "t", "no_op": true, "reason": "r", "summarised_count": 0,
				"tokens_before": 5, "tokens_after": 5, "summarizer": "s", "duration_ms": 0}},
		{CompactionEvent{Type: EventCompactionFinished, At: "t", SummaryID: "summary_1", SummarisedCount: n(4), TokensBefore: 9, TokensAfter: 2,
			RawHistoryTokens: 8, SummaryTokens: 1, CompactedTurns: 2, NewlyCovered: 4, Summarizer: "s", DurationMS: 12},
			map[string]any{"type": EventCompactionFinished, "at": "t", "no_op": false, "summary_id": "summary_1", "summarised_count": 4,
				"tokens_before": 9, "tokens_after": 2, "raw_history_tokens": 8, "summary_tokens": 1, "compacted_turns": 2,
				"newly_covered": 4, "summarizer": "s", "duration_ms": 12}},
		{CompactionEvent{Type: EventCompactionFailed, At: "t", Error: "e", Summarizer: "s", DurationMS: 3},
			map[string]any{"type": EventCompactionFailed, "at": "t", "error": "e", "summarizer": "s", "duration_ms": 3}},
	}
	for _, c := range cases {
		got, err := json.Marshal(c.ev)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(c.want)
		if string(got) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", c.ev.Type, got, want)
		}
		var back CompactionEvent
		if err := json.Unmarshal(got, &back); err != nil || back.Type != c.ev.Type || back.SummaryID != c.ev.SummaryID {
			t.Errorf("%s does not read back: %+v %v", c.ev.Type, back, err)
		}
	}
	if _, err := json.Marshal(CompactionEvent{Type: "node_pinned"}); err == nil {
		t.Error("a pin event encoded as a compaction event")
	}
}
