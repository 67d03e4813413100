package pi_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/format/pi"
	"github.com/ctxfold/ctxfold/internal/importtest"
)

// piWindow imports a recording with models.json (body, "" for none) in
// a temporary pi folder.
func piWindow(t *testing.T, scenario, body string, vars map[string]string) int64 {
	t.Helper()
	home := t.TempDir()
	if body != "" {
		dir := filepath.Join(home, ".pi", "agent")
		if d := vars["PI_CODING_AGENT_DIR"]; d != "" {
			dir = d
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "models.json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var tg importtest.Target
	env := input.Env{Home: home, Getenv: func(k string) string { return vars[k] }}
	file := "../../testdata/interop/pi/0.73.1/" + scenario + "/session.jsonl"
	if err := pi.Import(context.Background(), []string{file}, input.Options{Env: env}, &tg); err != nil {
		t.Fatal(err)
	}
	return tg.Convs[0].Window
}

// models.json as interop/pi/record.sh writes it.
func recordedModels(model string, window int) string {
	return `{"providers":{"fake":{"baseUrl":"http://127.0.0.1:1/v1","api":"openai-completions","apiKey":"dummy",
"compat":{"supportsDeveloperRole":false,"supportsReasoningEffort":false},
"models":[{"id":"` + model + `","contextWindow":` + itoa(window) + `,"maxTokens":100}]}}}`
}

func itoa(n int) string {
	b := []byte{}
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestConfiguredWindow(t *testing.T) {
	if w := piWindow(t, "chat", "", nil); w != 0 {
		t.Fatalf("no models.json: window %d, want 0", w)
	}
	if w := piWindow(t, "chat", recordedModels("gpt-5.4", 128000), nil); w != 128000 {
		t.Fatalf("record.sh's models.json: window %d, want 128000", w)
	}
	if w := piWindow(t, "compaction-limit", recordedModels("gpt-5.4", 1750), nil); w != 1750 {
		t.Fatalf("compaction-limit's models.json: window %d, want 1750", w)
	}
	// Another model of the provider: nothing; the model without a window:
	// pi's default for a custom model.
	if w := piWindow(t, "chat", recordedModels("other", 1750), nil); w != 0 {
		t.Fatalf("another model: window %d, want 0", w)
	}
	noWindow := `{"providers":{"fake":{"baseUrl":"http://x","api":"openai-completions","models":[{"id":"gpt-5.4"}]}}}`
	if w := piWindow(t, "chat", noWindow, nil); w != 128000 {
		t.Fatalf("a custom model without contextWindow: window %d, want pi's 128000", w)
	}
	// An override of a model, in a folder PI_CODING_AGENT_DIR names.
	override := `{"providers":{"fake":{"modelOverrides":{"gpt-5.4":{"contextWindow":400000}}}}}`
	if w := piWindow(t, "chat", override, map[string]string{"PI_CODING_AGENT_DIR": t.TempDir()}); w != 400000 {
		t.Fatalf("modelOverrides in PI_CODING_AGENT_DIR: window %d, want 400000", w)
	}
}

// A models.json that is there but not JSON gives no window and a warning
// naming it, so the user knows which file to fix.
func TestConfiguredWindowMalformed(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".pi", "agent")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "models.json")
	if err := os.WriteFile(bad, []byte(`{"providers": {`), 0o644); err != nil {
		t.Fatal(err)
	}
	var tg importtest.Target
	env := input.Env{Home: home}
	if err := pi.Import(context.Background(), []string{"../../testdata/interop/pi/0.73.1/chat/session.jsonl"}, input.Options{Env: env}, &tg); err != nil {
		t.Fatal(err)
	}
	c := tg.Convs[0]
	found := false
	for _, w := range c.Warnings {
		found = found || strings.Contains(w, bad) && strings.Contains(w, "not a JSON configuration")
	}
	if c.Window != 0 || !found {
		t.Fatalf("window %d, warnings %q: want 0 and one naming %s", c.Window, c.Warnings, bad)
	}
}
