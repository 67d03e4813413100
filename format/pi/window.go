package pi

// The context window of a session's model as pi configures it, read-only:
// ~/.pi/agent/models.json ($PI_CODING_AGENT_DIR moves the folder), where
// providers.<provider>.models[] defines a custom model (pi 0.73's
// model-registry.js: contextWindow, 128000 when the entry gives none) and
// providers.<provider>.modelOverrides.<id>.contextWindow changes a built-in
// one's. The session records the provider and model, never the window.

import (
	"path/filepath"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// defaultCustomWindow is the window pi gives a models.json model that
// names none.
const defaultCustomWindow = 128000

// AgentDir is pi's configuration folder: $PI_CODING_AGENT_DIR (a leading
// ~ expanded), else ~/.pi/agent; "" with no HOME.
func AgentDir(env input.Env) string {
	if d := env.Get("PI_CODING_AGENT_DIR"); d != "" {
		return env.ExpandHome(d)
	}
	if env.Home == "" {
		return ""
	}
	return filepath.Join(env.Home, ".pi", "agent")
}

// ConfiguredWindow is the window models.json gives provider/model, 0 when
// it defines or overrides neither.
func ConfiguredWindow(models any, provider, model string) int64 {
	if v, ok := input.ConfigValue(models, "providers", provider, "modelOverrides", model, "contextWindow"); ok {
		if w := input.ConfigTokens(v); w > 0 {
			return w
		}
	}
	list, _ := input.ConfigValue(models, "providers", provider, "models")
	m, ok := input.ConfigModel(list, model)
	if !ok {
		return 0
	}
	if w := input.ConfigTokens(m["contextWindow"]); w > 0 {
		return w
	}
	return defaultCustomWindow
}

// reportWindow hands the sink models.json's window for the session's
// model, when the sink takes one and models.json gives one.
func reportWindow(sink transcript.ImportSink, env input.Env, d *Decoder) {
	wr, ok := sink.(transcript.WindowReporter)
	dir := AgentDir(env)
	if !ok || dir == "" || d.model == "" {
		return
	}
	env.Warn = sink.Warn
	doc, _ := env.ReadConfig(filepath.Join(dir, "models.json"))
	if w := ConfiguredWindow(doc, d.provider, d.model); w > 0 {
		wr.SetConfiguredWindow(w)
	}
}
