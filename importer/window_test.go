package importer

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// importWindows writes one conversation whose assistant node records
// recorded (0: none) and whose importer reports configured (0: none), the
// way Import drives a target, and returns session.json's extras.
func importWindows(t *testing.T, recorded, configured int64) map[string]json.RawMessage {
	t.Helper()
	out := filepath.Join(t.TempDir(), "s")
	tg := newTarget(context.Background(), Options{Files: []string{"x"}, Out: out})
	sink, err := tg.Conversation("c")
	if err != nil {
		t.Fatal(err)
	}
	u := &transcript.Usage{InputTokens: 10, OutputTokens: 1}
	if recorded > 0 {
		u.Extra = map[string]json.RawMessage{transcript.UsageContextWindow: json.RawMessage(itoa(recorded))}
	}
	if err := sink.Node(transcript.Node{ID: "u1", Role: transcript.RoleUser, Content: transcript.TextContent("hi")}); err != nil {
		t.Fatal(err)
	}
	if err := sink.Node(transcript.Node{ID: "a1", Predecessor: "u1", Role: transcript.RoleAssistant, Content: transcript.TextContent("ok"), Usage: u}); err != nil {
		t.Fatal(err)
	}
	if configured > 0 {
		sink.(transcript.WindowReporter).SetConfiguredWindow(configured)
	}
	if err := tg.finishCurrent(); err != nil {
		t.Fatal(err)
	}
	if err := tg.place(); err != nil {
		t.Fatal(err)
	}
	tg.cleanup()
	s, err := store.Open(out, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s.Meta.Extra
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// The window the session file records beats the one the client's
// configuration gives; the latter is recorded, and said to be the
// configuration's, only when the file records none.
func TestConfiguredWindow(t *testing.T) {
	for _, tc := range []struct {
		recorded, configured int64
		want, source         string
	}{
		{0, 0, "", ""},
		{0, 200000, "200000", `"client_config"`},
		{131072, 200000, "131072", ""},
		{131072, 0, "131072", ""},
	} {
		extra := importWindows(t, tc.recorded, tc.configured)
		if got := string(extra[RecordedWindowKey]); got != tc.want {
			t.Errorf("recorded %d, configured %d: %s %q, want %q", tc.recorded, tc.configured, RecordedWindowKey, got, tc.want)
		}
		if got := string(extra[RecordedWindowSourceKey]); got != tc.source {
			t.Errorf("recorded %d, configured %d: %s %q, want %q", tc.recorded, tc.configured, RecordedWindowSourceKey, got, tc.source)
		}
	}
}
