package openclaw

// The context window OpenClaw gives a session's model, from its own
// configuration, read-only: $OPENCLAW_CONFIG_PATH, else openclaw.json in
// its state folder (stateDir), where models.providers.<provider>.models[]
// defines a model with its contextWindow (OpenClaw 2026.9's
// resolveConfigPath; the key as interop/openclaw/record.sh configures the
// fake). The transcript records the provider and model, not the window.

import (
	"path/filepath"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// configPath is the configuration file OpenClaw reads; "" when neither
// HOME nor an override names one.
func configPath(env input.Env) string {
	if p := strings.TrimSpace(env.Get("OPENCLAW_CONFIG_PATH")); p != "" {
		return env.ExpandHome(p)
	}
	if env.Home == "" && env.Get("OPENCLAW_STATE_DIR") == "" && env.Get("OPENCLAW_HOME") == "" {
		return ""
	}
	return filepath.Join(stateDir(env), "openclaw.json")
}

// reportWindow hands the sink the contextWindow the configuration gives
// the session's provider/model.
func reportWindow(sink transcript.ImportSink, env input.Env, d Decoder) {
	wr, ok := sink.(transcript.WindowReporter)
	provider, model := d.ProviderModel()
	path := configPath(env)
	if !ok || model == "" || path == "" {
		return
	}
	env.Warn = sink.Warn
	doc, _ := env.ReadConfig(path)
	list, _ := input.ConfigValue(doc, "models", "providers", provider, "models")
	if def, ok := input.ConfigModel(list, model); ok {
		if w := input.ConfigTokens(def["contextWindow"]); w > 0 {
			wr.SetConfiguredWindow(w)
		}
	}
}
