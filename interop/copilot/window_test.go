package copilot_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/internal/interoptest"
)

// TestEstimateWindow: a BYOK Copilot CLI session records its prompt limit
// on each session.usage_record (maxPromptTokens; record.sh's auto-compact
// sets COPILOT_PROVIDER_MAX_PROMPT_TOKENS=14000), and estimate budgets on
// it, not on the table's window for the model's name.
func TestEstimateWindow(t *testing.T) {
	var res struct {
		Window       int    `json:"window"`
		WindowSource string `json:"window_source"`
	}
	out := interoptest.Must(t, "estimate", filepath.Join(recordings, "auto-compact", "events.jsonl"), "--json")
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Window != 14000 || res.WindowSource != "session" {
		t.Fatalf("window %d from %q, want 14000 from the session", res.Window, res.WindowSource)
	}
}
