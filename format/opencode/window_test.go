package opencode_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/format/opencode"
)

// writeConfig writes a client configuration the way interop/opencode/
// record.sh does (JSONC allowed: the client accepts comments and trailing
// commas), naming fake/fake-model with the given window.
func writeConfig(t *testing.T, path string, window int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	body := `{"autoupdate": false, // the recording's settings
 "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "Fake",
   "options": {"baseURL": "http://127.0.0.1:1/v1", "apiKey": "fake-interop-key"},
   "models": {"fake-model": {"name": "Fake Model", "limit": {"context": ` + itoa(window) + `, "output": 8000}},}}},
 "model": "fake/fake-model"}`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func itoa(n int) string {
	b := []byte{}
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// The window of a custom model comes from the configuration the client
// merges: global, then the project's files, then the env's content; a
// recording's export and database estimate without --window.
func TestConfiguredWindow(t *testing.T) {
	home := t.TempDir()
	env := func(vars map[string]string) input.Env {
		return input.Env{Home: home, Getenv: func(k string) string { return vars[k] }}
	}
	window := func(path string, e input.Env) int64 {
		t.Helper()
		tg, err := importFile(t, path, opencode.Options{Env: e})
		if err != nil {
			t.Fatal(err)
		}
		return tg.Convs[0].Window
	}
	kiloExport := "../../testdata/interop/kilo/7.7.7/compaction/export-1.json"
	if w := window(kiloExport, env(nil)); w != 0 {
		t.Fatalf("no configuration: window %d, want 0", w)
	}
	// Kilo's global kilo.json, as record.sh writes it, for Kilo's export.
	writeConfig(t, filepath.Join(home, ".config/kilo/kilo.json"), 200000)
	if w := window(kiloExport, env(nil)); w != 200000 {
		t.Fatalf("kilo.json: window %d, want 200000", w)
	}
	if w := window(kiloExport, input.Env{}); w != 0 {
		t.Fatalf("zero Env: window %d, want 0 (no configuration read)", w)
	}
	// OpenCode's own global file beats Kilo's for an export (which names
	// no client); XDG_CONFIG_HOME moves it.
	xdg := t.TempDir()
	writeConfig(t, filepath.Join(xdg, "opencode/opencode.jsonc"), 131072)
	ocExport := recorded + "chat/export-1.json"
	if w := window(ocExport, env(map[string]string{"XDG_CONFIG_HOME": xdg})); w != 131072 {
		t.Fatalf("XDG opencode.jsonc: window %d, want 131072", w)
	}
	// A project file in the session's directory beats the global one;
	// OPENCODE_CONFIG_CONTENT beats both.
	// The session ran in proj/sub: its own file beats its parent's.
	parent := t.TempDir()
	proj := filepath.Join(parent, "sub")
	db := recordedDB(t, "chat", "opencode.db", "UPDATE session SET directory = '"+proj+"'")
	writeConfig(t, filepath.Join(xdg, "opencode/opencode.json"), 64000)
	writeConfig(t, filepath.Join(parent, "opencode.json"), 48000)
	writeConfig(t, filepath.Join(proj, "opencode.json"), 32000)
	vars := map[string]string{"XDG_CONFIG_HOME": xdg}
	if w := window(db, env(vars)); w != 32000 {
		t.Fatalf("project opencode.json: window %d, want 32000", w)
	}
	vars["OPENCODE_DISABLE_PROJECT_CONFIG"] = "1"
	if w := window(db, env(vars)); w != 131072 {
		t.Fatalf("project config disabled: window %d, want the global 131072 (opencode.jsonc loads after opencode.json)", w)
	}
	vars["OPENCODE_CONFIG_CONTENT"] = `{"provider":{"fake":{"models":{"fake-model":{"limit":{"context":16000}}}}}}`
	if w := window(db, env(vars)); w != 16000 {
		t.Fatalf("OPENCODE_CONFIG_CONTENT: window %d, want 16000", w)
	}
	// OpenCode's database reads OpenCode's configuration, never Kilo's.
	if w := window(recordedDB(t, "chat", "opencode.db"), env(nil)); w != 0 {
		t.Fatalf("opencode.db with only kilo.json: window %d, want 0", w)
	}
}
