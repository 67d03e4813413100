package droid

// The context window of a session's custom model (BYOK), from Droid's own
// settings, read-only. Droid 0.215's settings schema gives a custom model
// a maxContextLimit (customModels[] in ~/.factory/settings.json, or
// max_context_limit in the legacy ~/.factory/config.json custom_models);
// Droid itself compacts a custom model at its compactionTokenLimit
// (default 250000), which is a threshold, not the model's window, so it is
// not taken for one: with no maxContextLimit the window stays unknown and
// estimate asks for it by name (estimate.UnknownModelError's hint).

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// reportWindow hands the sink the maxContextLimit of the custom model the
// session used, when Droid's settings give one.
func reportWindow(sink transcript.ImportSink, env input.Env, model string) {
	wr, ok := sink.(transcript.WindowReporter)
	if !ok || env.Home == "" || !strings.HasPrefix(model, "custom:") {
		return
	}
	env.Warn = sink.Warn
	home := env.Home
	if h := env.Get("FACTORY_HOME_OVERRIDE"); h != "" {
		home = h
	}
	dir := filepath.Join(home, ".factory")
	// settings.local.json merges over settings.json (Droid's local
	// overrides); the legacy config.json comes last.
	for _, f := range []struct{ name, list, display, base, key, limit string }{
		{"settings.local.json", "customModels", "displayName", "baseUrl", "apiKey", "maxContextLimit"},
		{"settings.json", "customModels", "displayName", "baseUrl", "apiKey", "maxContextLimit"},
		{"config.json", "custom_models", "model_display_name", "base_url", "api_key", "max_context_limit"},
	} {
		doc, _ := env.ReadConfig(filepath.Join(dir, f.name))
		list, _ := input.ConfigValue(doc, f.list)
		entries, _ := list.([]any)
		// Droid's ids: an entry's own id, else custom:<its display name
		// (or model) with blanks as dashes>-<how many usable entries
		// before it share that name> (Droid 0.215's fqH and d3H).
		seen := map[string]int{}
		for _, e := range entries {
			m, _ := e.(map[string]any)
			name := input.ConfigString(m["model"])
			_, bedrock := m["bedrock"].(map[string]any)
			if name == "" || input.ConfigString(m["provider"]) == "" && f.list == "customModels" ||
				input.ConfigString(m[f.base]) == "" && !bedrock || placeholderKey(input.ConfigString(m[f.key])) {
				continue
			}
			if d := input.ConfigString(m[f.display]); d != "" {
				name = d
			}
			norm := blanks.ReplaceAllString(strings.TrimSpace(name), "-")
			id := "custom:" + norm + "-" + strconv.Itoa(seen[norm])
			seen[norm]++
			if own := input.ConfigString(m["id"]); own != "" && f.list == "customModels" {
				id = own
			}
			if id != model {
				continue
			}
			if w := input.ConfigTokens(m[f.limit]); w > 0 {
				wr.SetConfiguredWindow(w)
				return
			}
		}
	}
}

var blanks = regexp.MustCompile(`\s+`)

// placeholderKey is an API key Droid ignores the entry for.
func placeholderKey(k string) bool { return k == "YOUR_OPENAI_API_KEY" || k == "YOUR_API_KEY" }
