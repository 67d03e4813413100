package crush_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/format/crush"
	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/internal/importtest"
)

// recordedProject loads a recording's tables into <project>/.crush/crush.db
// and returns the project and the database.
func recordedProject(t *testing.T, scenario string) (string, string) {
	t.Helper()
	script, err := os.ReadFile("../../testdata/interop/crush/0.90.0/" + scenario + "/db.sql")
	if err != nil {
		t.Fatal(err)
	}
	project := t.TempDir()
	path := filepath.Join(project, ".crush", "crush.db")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(string(script)); err != nil {
		t.Fatal(err)
	}
	return project, path
}

// crushJSON is the project configuration interop/crush/record.sh writes.
func crushJSON(window string) string {
	return `{"options": {"disable_metrics": true, "disable_provider_auto_update": true, "disable_default_providers": true},
 "providers": {"fake": {"type": "openai-compat", "base_url": "http://127.0.0.1:1/v1", "api_key": "fake-interop-key",
   "discover_models": false,
   "models": [{"id": "fake-model", "name": "Fake Model", "context_window": ` + window + `, "default_max_tokens": 4000}]}},
 "models": {"large": {"model": "fake-model", "provider": "fake"}, "small": {"model": "fake-model", "provider": "fake"}}}`
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestConfiguredWindow(t *testing.T) {
	home := t.TempDir()
	window := func(db string, vars map[string]string) int64 {
		t.Helper()
		var tg importtest.Target
		env := input.Env{Home: home, Getenv: func(k string) string { return vars[k] }}
		if err := crush.Import(context.Background(), []string{db}, crush.Options{Env: env}, &tg); err != nil {
			t.Fatal(err)
		}
		return tg.Convs[0].Window
	}
	project, db := recordedProject(t, "chat")
	if w := window(db, nil); w != 0 {
		t.Fatalf("no crush.json: window %d, want 0", w)
	}
	// The global configuration, then the project's, which wins; its
	// .crush.json beats its crush.json.
	writeFile(t, filepath.Join(home, ".config", "crush", "crush.json"), crushJSON("64000"))
	if w := window(db, nil); w != 64000 {
		t.Fatalf("global crush.json: window %d, want 64000", w)
	}
	writeFile(t, filepath.Join(project, "crush.json"), crushJSON("200000"))
	if w := window(db, nil); w != 200000 {
		t.Fatalf("record.sh's project crush.json: window %d, want 200000", w)
	}
	writeFile(t, filepath.Join(project, ".crush.json"), crushJSON("100000"))
	if w := window(db, nil); w != 100000 {
		t.Fatalf(".crush.json: window %d, want 100000", w)
	}
	// The session's provider is fake: another provider's model of the
	// same id does not count.
	other := `{"providers": {"other": {"models": [{"id": "fake-model", "context_window": 5}]}}}`
	writeFile(t, filepath.Join(project, ".crush", "crush.json"), other)
	if w := window(db, nil); w != 100000 {
		t.Fatalf("another provider's model: window %d, want 100000", w)
	}
}
