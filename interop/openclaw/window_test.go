package openclaw_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/interoptest"
)

// TestEstimateWindow: each recording's store, with ~/.openclaw/openclaw.json
// as record.sh writes it, is budgeted for the window OpenClaw ran the
// model with (its contextWindow, not the table's for gpt-5.4).
func TestEstimateWindow(t *testing.T) {
	for _, s := range scenarios(t, fixturesOf(Version)) {
		t.Run(s.name, func(t *testing.T) {
			path := store(t, s.rows)
			cfg := filepath.Join(interoptest.Home(t), ".openclaw", "openclaw.json")
			if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
				t.Fatal(err)
			}
			body := `{"agents": {"defaults": {"model": {"primary": "fake/gpt-5.4"}, "workspace": "/tmp/w",
   "compaction": {"mode": "default", "keepRecentTokens": 20}}},
 "models": {"mode": "merge", "providers": {"fake": {"baseUrl": "http://127.0.0.1:1/v1", "apiKey": "dummy", "api": "openai-completions",
   "models": [{"id": "gpt-5.4", "name": "fake", "reasoning": false, "input": ["text"], "contextWindow": 128000, "maxTokens": 100}]}}}}`
			if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			var res struct {
				Window       int    `json:"window"`
				WindowSource string `json:"window_source"`
			}
			out := must(t, "estimate", path, "--json")
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("%v: %s", err, strings.TrimSpace(out))
			}
			if res.Window != 128000 || res.WindowSource != "client_config" {
				t.Errorf("window %d from %q, want 128000 from client_config", res.Window, res.WindowSource)
			}
		})
	}
}
