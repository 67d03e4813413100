package opencode_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/interoptest"
)

// writeClientConfig writes the global configuration interop/opencode/
// record.sh runs each client with (~/.config/<client>/<client>.json,
// under the test's XDG_CONFIG_HOME), its fake model's window included.
func writeClientConfig(t *testing.T, client string) {
	t.Helper()
	name := map[string]string{"opencode": "opencode.json", "kilo": "kilo.json"}[client]
	path := filepath.Join(interoptest.ConfigHome(t), client, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	body := `{"autoupdate": false, "share": "disabled",
 "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "Fake",
   "options": {"baseURL": "http://127.0.0.1:1/v1", "apiKey": "fake-interop-key"},
   "models": {"fake-model": {"name": "Fake Model", "limit": {"context": 200000, "output": 8000}}}}},
 "model": "fake/fake-model", "small_model": "fake/fake-model"}`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestEstimateWindow: each recording (its export, and its database as
// the client keeps it) estimates without --window once the client's
// configuration gives the custom model a window, and says so; without it
// the error names the key to set.
func TestEstimateWindow(t *testing.T) {
	for client, versions := range Versions {
		for _, v := range versions {
			for _, sc := range scenarios {
				dir := filepath.Join("../../testdata/interop", client, v, sc)
				if _, err := os.Stat(dir); err != nil {
					continue
				}
				t.Run(client+"/"+v+"/"+sc+"/unconfigured", func(t *testing.T) {
					_, errOut, code := ctxfold(t, "estimate", filepath.Join(dir, "export-1.json"))
					if code == 0 || !strings.Contains(errOut, `unknown model "fake-model"`) || !strings.Contains(errOut, "limit.context") {
						t.Fatalf("without configuration: exit %d, %s; want the unknown-model error naming limit.context", code, errOut)
					}
				})
				t.Run(client+"/"+v+"/"+sc, func(t *testing.T) {
					writeClientConfig(t, client)
					for _, file := range []string{filepath.Join(dir, "export-1.json"), buildDB(t, dir, client+".db")} {
						var res struct {
							Window       int    `json:"window"`
							WindowSource string `json:"window_source"`
						}
						if err := json.Unmarshal([]byte(interoptest.Must(t, "estimate", file, "--json")), &res); err != nil {
							t.Fatal(err)
						}
						if res.Window != 200000 || res.WindowSource != "client_config" {
							t.Errorf("%s: window %d from %q, want 200000 from client_config", filepath.Base(file), res.Window, res.WindowSource)
						}
					}
				})
			}
		}
	}
}
