package estimate

import (
	"encoding/json"
	"testing"

	"github.com/ctxfold/ctxfold/store"
)

func TestResolveModelFamilies(t *testing.T) {
	for _, c := range []struct {
		name, want, rule string
		window           int
	}{
		// Issue 13's names, each from a real transcript or client.
		{"claude-opus-5-5", "claude-opus-5-5", RuleExact, 1000000},
		{"gpt-5.2-codex", "gpt-5.2-codex", RuleExact, 272000},
		{"gpt-5.3-codex", "gpt-5.3-codex", RuleExact, 272000},
		{"gemini-3-flash-preview", "gemini-3-flash-preview", RuleExact, 1048576},
		{"gemini-3.1-pro-preview", "gemini-3.1-pro-preview", RuleExact, 1048576},
		{"gemini-3.1-pro-preview-customtools", "gemini-3.1-pro-preview-customtools", RuleExact, 1048576},
		// Issue 29: Gemini CLI 0.61's default, Codex 0.171's new and
		// changed models.
		{"gemini-3.8-flash", "gemini-3.8-flash", RuleExact, 1048576},
		{"gemini-3.1-flash-lite", "gemini-3.1-flash-lite", RuleExact, 1048576},
		{"gemini-3-flash", "gemini-3-flash", RuleExact, 1048576},
		{"gpt-6.1-sol", "gpt-6.1-sol", RuleExact, 500000},
		{"gpt-6.2-sol", "gpt-6.2-sol", RuleExact, 500000},
		{"gpt-6.2-astra", "gpt-6.2-astra", RuleExact, 272000},
		{"codex-auto-review", "codex-auto-review", RuleExact, 272000},
		// An editor's prefix is an alias (no warning), a custom word is not.
		{"aide-gpt-5", "gpt-5", RuleAlias, 272000},
		{"aide:gpt-4o", "gpt-4o", RuleAlias, 128000},
		{"cursor-claude-sonnet-4-5", "claude-sonnet-4-5", RuleAlias, 200000},
		{"aide-gemini-3.8-flash", "gemini-3.8-flash", RuleAlias, 1048576},
		{"acme-gpt-5", "gpt-5", RuleFamily, 272000},
		{"aide-my-gpt-5", "gpt-5", RuleFamily, 272000},
		// Aliases: the same model spelled otherwise.
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5", RuleAlias, 200000},
		{"claude-sonnet-4-20250514", "claude-sonnet-4", RuleAlias, 200000},
		{"anthropic/claude-opus-4-6", "claude-opus-4-6", RuleAlias, 200000},
		{"claude-opus-4-6[1m]", "claude-opus-4-6", RuleAlias, 1000000},
		{"us.anthropic.claude-opus-4-1-20250805-v1:0", "claude-opus-4-1", RuleAlias, 200000},
		{"claude-opus-4-5@20251101", "claude-opus-4-5", RuleAlias, 200000},
		{"openai/gpt-5.1-codex", "gpt-5.1-codex", RuleAlias, 272000},
		// GitHub Copilot CLI's spelling of Claude models (issue 37).
		{"claude-sonnet-4.5", "claude-sonnet-4-5", RuleAlias, 200000},
		{"claude-opus-4.8", "claude-opus-4-8", RuleAlias, 1000000},
		{"gpt-4o-2024-08-06", "gpt-4o", RuleAlias, 128000},
		{"gpt-4-0613", "gpt-4", RuleAlias, 8192},
		{"gemini-2.5-flash-preview-05-20", "gemini-2.5-flash", RuleAlias, 1048576},
		{"GPT-4.1", "gpt-4.1", RuleExact, 1047576},
		// Family rules: another member stands in.
		{"claude-opus-5-7", "claude-opus-5-5", RuleFamily, 1000000},
		{"claude-opus-4-9", "claude-opus-4-8", RuleFamily, 1000000},
		{"gpt-5.4-codex", "gpt-5.3-codex", RuleFamily, 272000},
		{"gpt-5.3-codex-spark", "gpt-5.3-codex", RuleFamily, 272000},
		{"gemini-3.5-pro", "gemini-3.1-pro-preview", RuleFamily, 1048576},
		{"gemini-3-pro", "gemini-3-pro-preview", RuleFamily, 1048576},
		{"o5-mini", "o4-mini", RuleFamily, 200000},
		{"openrouter/acme-claude-sonnet-4-5-proxy", "claude-sonnet-4-5", RuleFamily, 200000},
		{"llama3.1:70b", "llama-3.1-70b", RuleFamily, 131072},
		{"qwen3-coder:480b-a35b", "qwen3-coder", RuleAlias, 262144},
	} {
		r, ok := ResolveModel(c.name, nil)
		if c.rule == "" {
			continue
		}
		if !ok {
			t.Errorf("%s: not resolved", c.name)
			continue
		}
		if r.Model.Name != c.want || r.Rule != c.rule || r.Model.Window != c.window {
			t.Errorf("%s: resolved to %s (%s, window %d), want %s (%s, window %d)", c.name, r.Model.Name, r.Rule, r.Model.Window, c.want, c.rule, c.window)
		}
		if (r.Rule == RuleFamily) != (r.Warning() != "") {
			t.Errorf("%s: rule %s, warning %q", c.name, r.Rule, r.Warning())
		}
	}
	for _, name := range []string{"", "nonsense-model", "gpt-9000", "foo", "banana-7b", "1234"} {
		if r, ok := ResolveModel(name, nil); ok {
			t.Errorf("%q resolved to %s (%s); want unknown", name, r.Model.Name, r.Rule)
		}
	}
}

func TestResolveModelConfigWins(t *testing.T) {
	extra := map[string]Model{"aide-gpt-5": {Window: 50000, Provider: ProviderOpenAI, Encoding: O200kBase}}
	r, ok := ResolveModel("aide-gpt-5", extra)
	if !ok || r.Rule != RuleExact || r.Model.Window != 50000 || r.Model.Source != srcConfig {
		t.Fatalf("config entry: %+v %v", r, ok)
	}
	// A config family member is a candidate too.
	r, ok = ResolveModel("house-3", map[string]Model{"house-2": {Window: 9000}})
	if !ok || r.Model.Name != "house-2" || r.Rule != RuleFamily || !r.Model.Proxy {
		t.Fatalf("config family: %+v %v", r, ok)
	}
}

func TestBudgetRecordedWindowBeatsTable(t *testing.T) {
	b, err := Budget(Options{Model: "gpt-5.1-codex", RecordedWindow: 258400})
	if err != nil {
		t.Fatal(err)
	}
	if b.Window != 258400 || b.WindowSource != WindowFromSession {
		t.Fatalf("window %d from %s, want 258400 from the session", b.Window, b.WindowSource)
	}
	// --window beats the recorded one.
	b, err = Budget(Options{Model: "gpt-5.1-codex", RecordedWindow: 258400, Window: 100000})
	if err != nil || b.Window != 100000 || b.WindowSource != WindowFromFlag {
		t.Fatalf("flag: %+v %v", b, err)
	}
	// An unknown model with a recorded window budgets (a proxy count).
	b, err = Budget(Options{Model: "nonsense-model", RecordedWindow: 64000})
	if err != nil || b.Window != 64000 || !b.EncodingIsProxy {
		t.Fatalf("unknown with recorded window: %+v %v", b, err)
	}
	if _, err := Budget(Options{Model: "nonsense-model"}); err == nil {
		t.Fatal("unknown model without a window budgeted")
	}
	meta := store.Meta{Extra: map[string]json.RawMessage{RecordedWindowKey: json.RawMessage("258400")}}
	if got := RecordedWindow(meta); got != 258400 {
		t.Fatalf("RecordedWindow = %d", got)
	}
	meta.Extra[RecordedWindowKey] = json.RawMessage(`"big"`)
	if got := RecordedWindow(meta); got != 0 {
		t.Fatalf("RecordedWindow of a string = %d", got)
	}
}

func TestTableHasSources(t *testing.T) {
	for _, m := range Table(nil) {
		if m.Source == "" || m.Window <= 0 || m.Encoding == "" || !ValidProvider(m.Provider) {
			t.Errorf("%s: incomplete entry %+v", m.Name, m)
		}
		if m.Provider != ProviderOpenAI && !m.Proxy {
			t.Errorf("%s: a %s model counted as exact", m.Name, m.Provider)
		}
	}
}
