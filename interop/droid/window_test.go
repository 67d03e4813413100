package droid_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/interoptest"
)

// TestEstimateWindow: each recording estimates without --window once
// ~/.factory/settings.json is the one record.sh writes (its custom model's
// maxContextLimit), and says where the window came from; without it the
// error names the key to set (Droid itself knows no window for a custom
// model: its compactionTokenLimit is a threshold, not taken for one).
func TestEstimateWindow(t *testing.T) {
	for _, v := range Versions {
		for _, s := range scenarios(t, fixturesOf(v)) {
			t.Run(v+"/"+s.name+"/unconfigured", func(t *testing.T) {
				_, errOut, code := ctxfold(t, "estimate", s.session)
				if code == 0 || !strings.Contains(errOut, `unknown model "custom:Fake-0"`) || !strings.Contains(errOut, "customModels[].maxContextLimit") {
					t.Fatalf("without maxContextLimit: exit %d, %s; want the unknown-model error naming customModels[].maxContextLimit", code, errOut)
				}
				if _, errOut, _ := ctxfold(t, "import", s.session, "-o", filepath.Join(t.TempDir(), "s")); !strings.Contains(errOut, "not in the model table") {
					t.Errorf("import without maxContextLimit: %q, want the unknown-model notice", errOut)
				}
			})
			t.Run(v+"/"+s.name, func(t *testing.T) {
				settings := filepath.Join(interoptest.Home(t), ".factory", "settings.json")
				if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
					t.Fatal(err)
				}
				body := `{"customModels":[{"model":"fake-model","displayName":"Fake","baseUrl":"http://127.0.0.1:1/v1","apiKey":"dummy","provider":"generic-chat-completion-api","maxOutputTokens":1024,"maxContextLimit":200000}]}`
				if err := os.WriteFile(settings, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
				// import records the window, so it warns of no --window to come.
				_, errOut, code := ctxfold(t, "import", s.session, "-o", filepath.Join(t.TempDir(), "s"))
				if code != 0 || strings.Contains(errOut, "not in the model table") {
					t.Errorf("import with maxContextLimit: exit %d, %s", code, errOut)
				}
				var res struct {
					Window       int    `json:"window"`
					WindowSource string `json:"window_source"`
				}
				if err := json.Unmarshal([]byte(must(t, "estimate", s.session, "--json")), &res); err != nil {
					t.Fatal(err)
				}
				if res.Window != 200000 || res.WindowSource != "client_config" {
					t.Errorf("window %d from %q, want 200000 from client_config", res.Window, res.WindowSource)
				}
			})
		}
	}
}

// TestEstimateWindowConfiguredLater: the user sets the key the hint names
// after a failed estimate; the transcript did not change, but the cache
// re-reads it because the configuration it consulted did (live/config.go).
func TestEstimateWindowConfiguredLater(t *testing.T) {
	s := scenarios(t, fixturesOf(Version))[0]
	if _, errOut, code := ctxfold(t, "estimate", s.session); code == 0 {
		t.Fatalf("without maxContextLimit: exit 0, %s", errOut)
	}
	settings := filepath.Join(interoptest.Home(t), ".factory", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	body := `{"customModels":[{"model":"fake-model","displayName":"Fake","baseUrl":"http://127.0.0.1:1/v1","apiKey":"dummy","provider":"generic-chat-completion-api","maxContextLimit":131072}]}`
	if err := os.WriteFile(settings, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Window int `json:"window"`
	}
	if err := json.Unmarshal([]byte(must(t, "estimate", s.session, "--json")), &res); err != nil {
		t.Fatal(err)
	}
	if res.Window != 131072 {
		t.Fatalf("window %d after setting maxContextLimit, want 131072", res.Window)
	}
}
