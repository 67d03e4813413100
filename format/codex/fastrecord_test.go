package codex

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
)

// compareFast reports whether fastRecord decoded line, failing t where
// its record differs from input.Unmarshal's.
func compareFast(t testing.TB, line []byte) bool {
	t.Helper()
	var want record
	werr := input.Unmarshal(line, &want)
	var got record
	if !fastRecord(line, &got) {
		if !reflect.DeepEqual(got, record{}) {
			t.Errorf("fastRecord failed but left a record behind: %q", line)
		}
		return false
	}
	if werr != nil {
		t.Errorf("fastRecord decoded a line input.Unmarshal refuses (%v): %q", werr, line)
	} else if !reflect.DeepEqual(got, want) {
		t.Errorf("fastRecord differs from input.Unmarshal on %q:\n got %+v\nwant %+v", line, got, want)
	}
	return true
}

var fastSeeds = []string{
	`{"timestamp":"2025-01-01T00:00:00Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}`,
	`{"type":"event_msg","payload":null}`, `{"type":"x"}`, `{"record_type":"state"}`, `{"id":"i","timestamp":"t","instructions":null}`,
	`{"type":"turn_context","ordinal":3,"payload":{}}`, `{"ordinal":-0}`, `{"ordinal":null}`, `{"ordinal":1.5}`, `{"ordinal":1e3}`,
	`{"ordinal":99999999999999999999}`, `{"ordinal":"3"}`, `{"Type":"x"}`, `{"record-type":"s"}`, `{"type":"a","type":"b"}`,
	`{"type":5}`, `{"type":"x",}`, `{"type":"x"} {}`, `[]`, `{"payload":[1,2,{"a":"\u00e9\n"}]}`, "{\"type\":\"\xff\"}",
}

func TestFastRecordSeeds(t *testing.T) {
	fast := 0
	for _, s := range fastSeeds {
		if compareFast(t, []byte(s)) {
			fast++
		}
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
	f.Fuzz(func(t *testing.T, line []byte) { compareFast(t, line) })
}
