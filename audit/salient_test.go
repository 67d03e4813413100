package audit

import (
	"slices"
	"testing"
)

func TestSalient(t *testing.T) {
	got := Salient("Added `validate_session_message_ids/2` in lib/spotter_web/live/session_live.ex; the hook " +
		"`phx-hook=\"TranscriptSelection\"` calls window.getSelection() and create_message_refs. Migration 20260211203856, 3 tests.")
	want := []string{"validate_session_message_ids/2", `phx-hook="TranscriptSelection"`, "lib/spotter_web/live/session_live.ex",
		"window.getSelection()", "create_message_refs", "20260211203856"}
	if !slices.Equal(got, want) {
		t.Errorf("Salient = %q, want %q", got, want)
	}
	m := NewMatcher("see spotter_web/live/session_live.ex: validate_session_message_ids(session, ids); window.getSelection")
	for item, kept := range map[string]bool{"lib/spotter_web/live/session_live.ex": true, "validate_session_message_ids/2": true,
		"window.getSelection()": true, "create_message_refs": false} {
		if m.HasSalient(item) != kept {
			t.Errorf("HasSalient(%q) = %v, want %v", item, !kept, kept)
		}
	}
}
