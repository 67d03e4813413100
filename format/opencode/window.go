package opencode

// The context window OpenCode (and Kilo) give a session's model, from the
// configuration the client itself merges: provider.<id>.models.<id>.limit
// .context. Neither the database nor an export records it, and for a
// custom provider (a local model, a gateway) no table knows it. The
// files are read in the client's order, a later one winning (OpenCode
// 1.18's Config.loadInstanceState, Kilo 7.7's KilocodeConfig): the
// global folder, $OPENCODE_CONFIG, the project's files from the
// filesystem root down to the session's directory, its .opencode folders
// and $OPENCODE_CONFIG_DIR, then $OPENCODE_CONFIG_CONTENT. Read-only.

import (
	"path/filepath"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// configClient is how one client names its configuration.
type configClient struct {
	name       string   // the folder under ~/.config, and the env prefix
	global     []string // file names in the global folder, in load order
	project    []string // file names in a project folder, in load order
	dotFolders []string // a project's config folders
}

var (
	openCodeConfig = configClient{name: "opencode",
		global:     []string{"config.json", "opencode.json", "opencode.jsonc"},
		project:    []string{"opencode.json", "opencode.jsonc"},
		dotFolders: []string{".opencode"}}
	kiloConfig = configClient{name: "kilo",
		global:     []string{"config.json", "kilo.json", "kilo.jsonc", "opencode.json", "opencode.jsonc"},
		project:    []string{"kilo.jsonc", "kilo.json", "opencode.jsonc", "opencode.json"},
		dotFolders: []string{".kilo", ".kilocode"}}
)

// WindowKey is the configuration key a user sets for a custom model's
// window (the hint of an unknown model names it).
const WindowKey = "provider.<id>.models.<id>.limit.context in opencode.json (Kilo: kilo.json)"

// configuredWindow is the window the client's configuration gives
// provider/model, 0 when none does.
func (cc configClient) configuredWindow(env input.Env, dir, provider, model string) int64 {
	if env.Home == "" || model == "" {
		return 0
	}
	var w int64
	look := func(doc any) {
		if doc == nil {
			return
		}
		if v, ok := input.ConfigValue(doc, "provider", provider, "models", model, "limit", "context"); ok {
			if n := input.ConfigTokens(v); n > 0 {
				w = n
			}
		}
	}
	file := func(path string) {
		doc, _ := env.ReadConfig(path)
		look(doc)
	}
	prefix := strings.ToUpper(cc.name)
	if home := env.ConfigHome(); home != "" {
		for _, f := range cc.global {
			file(filepath.Join(home, cc.name, f))
		}
	}
	if p := env.Get(prefix + "_CONFIG"); p != "" {
		file(p)
	}
	if env.Get(prefix+"_DISABLE_PROJECT_CONFIG") == "" && dir != "" && filepath.IsAbs(dir) {
		for _, d := range input.DirsRootFirst(dir) {
			for _, f := range cc.project {
				file(filepath.Join(d, f))
			}
		}
		for _, d := range input.DirsRootFirst(dir) {
			for _, sub := range cc.dotFolders {
				for _, f := range cc.project {
					file(filepath.Join(d, sub, f))
				}
			}
		}
	}
	if d := env.Get(prefix + "_CONFIG_DIR"); d != "" {
		for _, f := range cc.project {
			file(filepath.Join(d, f))
		}
	}
	if c := env.Get(prefix + "_CONFIG_CONTENT"); c != "" {
		doc, _ := input.ParseConfig(prefix+"_CONFIG_CONTENT", []byte(c))
		look(doc)
	}
	return w
}

// clientsOf names whose configuration a source's sessions follow: Kilo's
// for its database (kilo.db), OpenCode's for OpenCode's; an export names
// no client, so OpenCode's is read, then Kilo's where OpenCode's has the
// model not.
func clientsOf(file string) []configClient {
	base := filepath.Base(file)
	switch {
	case strings.HasPrefix(base, "kilo") && filepath.Ext(base) == ".db":
		return []configClient{kiloConfig}
	case filepath.Ext(base) == ".db":
		return []configClient{openCodeConfig}
	}
	return []configClient{openCodeConfig, kiloConfig}
}

// reportWindow hands the sink the window the configuration gives the
// session's model, when the sink takes one and a configuration does.
func (c *conv) reportWindow(env input.Env) {
	wr, ok := c.sink.(transcript.WindowReporter)
	if !ok || c.model == "" {
		return
	}
	env.Warn = c.sink.Warn
	for _, cc := range clientsOf(c.session.file) {
		if w := cc.configuredWindow(env, c.session.directory, c.provider, c.model); w > 0 {
			wr.SetConfiguredWindow(w)
			return
		}
	}
}
