package codex

import (
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
)

// compareFast reports whether fastRecord decoded line, failing t where
// its record differs from input.Unmarshal's.
func compareFast(t testing.TB, line []byte) bool {
	t.Helper()
	return agrees(t, line, fastRecord)
}

// comparePayloads runs fastItem and fastEvent on line itself and on its
// payload where it is a response_item or an event_msg, against
// input.Unmarshal; it reports whether the payload took the fast path.
func comparePayloads(t testing.TB, line []byte) bool {
	t.Helper()
	agrees(t, line, fastItem)
	agrees(t, line, fastEvent)
	var rec record
	if input.Unmarshal(line, &rec) != nil {
		return false
	}
	switch rec.Type {
	case "response_item":
		return agrees(t, rec.Payload, fastItem)
	case "event_msg":
		return agrees(t, rec.Payload, fastEvent)
	}
	return true
}

// agrees holds a fast decoder to input.Unmarshal on raw.
func agrees[T any](t testing.TB, raw []byte, fast func([]byte, *T) bool) bool {
	t.Helper()
	return sessiontest.FastAgrees(t, raw, fast, func(b []byte, v *T) error { return input.Unmarshal(b, v) })
}

var fastSeeds = []string{
	`{"timestamp":"2025-01-01T00:00:00Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}`,
	`{"type":"event_msg","payload":null}`, `{"type":"x"}`, `{"record_type":"state"}`, `{"id":"i","timestamp":"t","instructions":null}`,
	`{"type":"turn_context","ordinal":3,"payload":{}}`, `{"ordinal":-0}`, `{"ordinal":null}`, `{"ordinal":1.5}`, `{"ordinal":1e3}`,
	`{"ordinal":99999999999999999999}`, `{"ordinal":"3"}`, `{"Type":"x"}`, `{"record-type":"s"}`, `{"type":"a","type":"b"}`,
	`{"type":5}`, `{"type":"x",}`, `{"type":"x"} {}`, `[]`, `{"payload":[1,2,{"a":"\u00e9\n"}]}`, "{\"type\":\"\xff\"}",
	`{"type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"t"},null],"encrypted_content":"gAAA","content":null}}`,
	`{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"cmd\":[\"ls\"]}","call_id":"c1"}}`,
	`{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":{"content":"x","success":true}}}`,
	`{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"}],"phase":"final","id":"m"}}`,
	`{"type":"response_item","payload":{"encrypted_content":5}}`, `{"type":"response_item","payload":{"summary":"s"}}`,
	`{"type":"response_item","payload":{"summary":[{"type":"a","Type":"b"}]}}`, `{"type":"response_item","payload":{"callId":"x"}}`,
	`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":5},"last_token_usage":{"input_tokens":3,"cached_input_tokens":1,"output_tokens":2,"reasoning_output_tokens":0,"total_tokens":5},"model_context_window":258400}}}`,
	`{"type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{}}}`, `{"type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":null,"model_context_window":null}}}`,
	`{"type":"event_msg","payload":{"info":{"model_context_window":1.5}}}`, `{"type":"event_msg","payload":{"info":{"last_token_usage":{"input_tokens":"3"}}}}`,
	`{"type":"event_msg","payload":{"type":"agent_message","message":"hello"}}`, `{"type":"event_msg","payload":{"info":[]}}`,
}

func TestFastRecordSeeds(t *testing.T) {
	fast := 0
	for _, s := range fastSeeds {
		if compareFast(t, []byte(s)) {
			fast++
		}
		comparePayloads(t, []byte(s))
	}
	if fast < 8 {
		t.Errorf("fastRecord decoded only %d of %d seeds", fast, len(fastSeeds))
	}
}

// TestFastRecordMatchesOnRealLines compares fastRecord with input.Unmarshal
// on every line of the shared real transcripts and the repository's
// recordings, and requires it to decode nearly every Codex line.
func TestFastRecordMatchesOnRealLines(t *testing.T) {
	lines, fast := 0, 0
	sessiontest.EachRealLine(t, "../..", func(path string, line []byte) {
		ok := compareFast(t, line)
		ok = comparePayloads(t, line) && ok
		if strings.Contains(path, "codex") {
			lines++
			if ok {
				fast++
			}
		}
	})
	t.Logf("%d of %d Codex lines decoded by the fast path", fast, lines)
	if lines < 1000 || fast*100 < lines*90 {
		t.Errorf("the fast path decoded %d of %d Codex lines; want 90%%", fast, lines)
	}
}

func FuzzFastRecord(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		compareFast(t, line)
		comparePayloads(t, line)
	})
}
