package pi_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/internal/interoptest"
)

// TestEstimateWindow: with ~/.pi/agent/models.json as record.sh writes it,
// each recording is budgeted for the window pi itself ran with (its
// models.json contextWindow: 1,750 for the scenarios that make pi compact
// on it), not the table's for the model's name.
func TestEstimateWindow(t *testing.T) {
	for _, s := range scenarios(t, fixturesOf(Version)) {
		t.Run(s.name, func(t *testing.T) {
			api, model, window := "openai-completions", "gpt-5.4", 128000
			if s.name == "anthropic" {
				api, model = "anthropic-messages", "claude-sonnet-4-5"
			}
			if s.name == "compaction-limit" || s.name == "anthropic" {
				window = 1750
			}
			models := filepath.Join(interoptest.Home(t), ".pi", "agent", "models.json")
			if err := os.MkdirAll(filepath.Dir(models), 0o755); err != nil {
				t.Fatal(err)
			}
			body, _ := json.Marshal(map[string]any{"providers": map[string]any{"fake": map[string]any{
				"baseUrl": "http://127.0.0.1:1", "api": api, "apiKey": "dummy",
				"compat": map[string]any{"supportsDeveloperRole": false, "supportsReasoningEffort": false},
				"models": []any{map[string]any{"id": model, "contextWindow": window, "maxTokens": 100}}}}})
			if err := os.WriteFile(models, body, 0o644); err != nil {
				t.Fatal(err)
			}
			var res struct {
				Window       int    `json:"window"`
				WindowSource string `json:"window_source"`
			}
			if err := json.Unmarshal([]byte(must(t, "estimate", s.session, "--json")), &res); err != nil {
				t.Fatal(err)
			}
			if res.Window != window || res.WindowSource != "client_config" {
				t.Errorf("window %d from %q, want %d from client_config", res.Window, res.WindowSource, window)
			}
		})
	}
}
