package crush_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/interoptest"
)

// TestEstimateWindow: each recording's database, in the project whose
// crush.json is the one record.sh writes, estimates without --window on
// the window Crush ran the custom model with; without it, the error names
// the key to set.
func TestEstimateWindow(t *testing.T) {
	for _, v := range Versions {
		for _, sc := range scenarios {
			dir := filepath.Join("../../testdata/interop/crush", v, sc)
			t.Run(v+"/"+sc+"/unconfigured", func(t *testing.T) {
				_, errOut, code := interoptest.Ctxfold(t, "estimate", buildDB(t, dir))
				if code == 0 || !strings.Contains(errOut, `unknown model "fake-model"`) || !strings.Contains(errOut, "context_window") {
					t.Fatalf("without crush.json: exit %d, %s; want the unknown-model error naming context_window", code, errOut)
				}
			})
			t.Run(v+"/"+sc, func(t *testing.T) {
				db := buildDB(t, dir)
				typ := "openai-compat"
				if sc == "anthropic" {
					typ = "anthropic"
				}
				body := `{"options": {"disable_metrics": true, "disable_provider_auto_update": true, "disable_default_providers": true},
 "providers": {"fake": {"type": "` + typ + `", "base_url": "http://127.0.0.1:1", "api_key": "fake-interop-key",
   "discover_models": false,
   "models": [{"id": "fake-model", "name": "Fake Model", "context_window": 200000, "default_max_tokens": 4000}]}},
 "models": {"large": {"model": "fake-model", "provider": "fake"}, "small": {"model": "fake-model", "provider": "fake"}}}`
				// The project is the folder holding .crush/crush.db.
				if err := os.WriteFile(filepath.Join(filepath.Dir(filepath.Dir(db)), "crush.json"), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
				var res struct {
					Window       int    `json:"window"`
					WindowSource string `json:"window_source"`
				}
				if err := json.Unmarshal([]byte(interoptest.Must(t, "estimate", db, "--json")), &res); err != nil {
					t.Fatal(err)
				}
				if res.Window != 200000 || res.WindowSource != "client_config" {
					t.Errorf("window %d from %q, want 200000 from client_config", res.Window, res.WindowSource)
				}
			})
		}
	}
}
