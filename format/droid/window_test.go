package droid_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/format/droid"
	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/internal/importtest"
)

// The recorded session used custom:Fake-0: the first custom model named
// Fake in ~/.factory/settings.json.
const recordedChat = "../../testdata/interop/droid/0.215.0/chat/a4a18544-74b4-4bee-80b0-dbef2252d618.jsonl"

func windowWith(t *testing.T, home, file, body string, vars map[string]string) int64 {
	t.Helper()
	if body != "" {
		if err := os.MkdirAll(filepath.Join(home, ".factory"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, ".factory", file), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var tg importtest.Target
	env := input.Env{Home: home, Getenv: func(k string) string { return vars[k] }}
	if err := droid.Import(context.Background(), []string{recordedChat}, droid.Options{Env: env}, &tg); err != nil {
		t.Fatal(err)
	}
	return tg.Convs[0].Window
}

func TestConfiguredWindow(t *testing.T) {
	// As interop/droid/record.sh writes it.
	recorded := `{"customModels":[{"model":"fake-model","displayName":"Fake","baseUrl":"http://127.0.0.1:1/v1","apiKey":"dummy","provider":"generic-chat-completion-api","maxOutputTokens":1024,"maxContextLimit":200000}]}`
	if w := windowWith(t, t.TempDir(), "settings.json", recorded, nil); w != 200000 {
		t.Fatalf("record.sh's settings: window %d, want 200000", w)
	}
	// Without maxContextLimit Droid knows no window for the model (its
	// compactionTokenLimit is a threshold): none is made up.
	plain := `{"customModels":[{"model":"fake-model","displayName":"Fake","baseUrl":"http://x","apiKey":"k","provider":"generic-chat-completion-api"}],"compactionTokenLimit":100000}`
	if w := windowWith(t, t.TempDir(), "settings.json", plain, nil); w != 0 {
		t.Fatalf("no maxContextLimit: window %d, want 0", w)
	}
	// The id counts earlier usable entries of the same name: custom:Fake-0
	// is the second entry here, the first being skipped for its
	// placeholder key; another name does not count.
	ids := `{"customModels":[
	 {"model":"a","displayName":"Fake","baseUrl":"http://x","apiKey":"YOUR_API_KEY","provider":"openai","maxContextLimit":1000},
	 {"model":"b","displayName":"Other","baseUrl":"http://x","apiKey":"k","provider":"openai","maxContextLimit":2000},
	 {"model":"c","displayName":"Fake","baseUrl":"http://x","apiKey":"k","provider":"openai","maxContextLimit":3000},
	 {"model":"d","displayName":"Fake","baseUrl":"http://x","apiKey":"k","provider":"openai","maxContextLimit":4000}]}`
	if w := windowWith(t, t.TempDir(), "settings.json", ids, nil); w != 3000 {
		t.Fatalf("custom:Fake-0 among several: window %d, want 3000", w)
	}
	// The second usable entry named Fake is custom:Fake-1.
	data, err := os.ReadFile(recordedChat)
	if err != nil {
		t.Fatal(err)
	}
	second := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(second, bytes.ReplaceAll(data, []byte(`"custom:Fake-0"`), []byte(`"custom:Fake-1"`)), 0o644); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	windowWith(t, home, "settings.json", ids, nil)
	var tg importtest.Target
	env := input.Env{Home: home, Getenv: func(string) string { return "" }}
	if err := droid.Import(context.Background(), []string{second}, droid.Options{Env: env}, &tg); err != nil {
		t.Fatal(err)
	}
	if w := tg.Convs[0].Window; w != 4000 {
		t.Fatalf("custom:Fake-1 among several: window %d, want 4000", w)
	}
	// The legacy config.json, and FACTORY_HOME_OVERRIDE moving the folder.
	legacy := `{"custom_models":[{"model":"fake-model","model_display_name":"Fake","base_url":"http://x","api_key":"k","provider":"openai","max_context_limit":64000}]}`
	moved := t.TempDir()
	if w := windowWith(t, moved, "config.json", legacy, nil); w != 64000 {
		t.Fatalf("legacy config.json: window %d, want 64000", w)
	}
	if w := windowWith(t, t.TempDir(), "", "", map[string]string{"FACTORY_HOME_OVERRIDE": moved}); w != 64000 {
		t.Fatalf("FACTORY_HOME_OVERRIDE: window %d, want 64000", w)
	}
}
