package crush

// The context window Crush gives a session's model, from the JSON
// configuration Crush 0.90 merges (internal/config/load.go lookupConfigs),
// read-only: /etc/crush/crush.json, the global crush.json
// ($CRUSH_GLOBAL_CONFIG, else $XDG_CONFIG_HOME/crush or ~/.config/crush),
// the data one ($CRUSH_GLOBAL_DATA, $XDG_DATA_HOME/crush or
// ~/.local/share/crush), then crush.json and .crush.json from the
// filesystem root down to the project (the closest winning, .crush.json
// over crush.json), then the project's .crush/crush.json; a later file
// wins. The key is providers.<id>.models[] {id, context_window}. crushrc
// files are shell scripts and never run. The database records the model
// and its provider, never the window.

import (
	"context"
	"database/sql"
	"path/filepath"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// configFiles lists the configuration files in Crush's load order for a
// project directory ("" when the database is not in a project's .crush).
func configFiles(env input.Env, project string) []string {
	files := []string{"/etc/crush/crush.json"}
	switch {
	case env.Get("CRUSH_GLOBAL_CONFIG") != "":
		files = append(files, filepath.Join(env.Get("CRUSH_GLOBAL_CONFIG"), "crush.json"))
	case env.ConfigHome() != "":
		files = append(files, filepath.Join(env.ConfigHome(), "crush", "crush.json"))
	}
	switch {
	case env.Get("CRUSH_GLOBAL_DATA") != "":
		files = append(files, filepath.Join(env.Get("CRUSH_GLOBAL_DATA"), "crush.json"))
	case env.Get("XDG_DATA_HOME") != "":
		files = append(files, filepath.Join(env.Get("XDG_DATA_HOME"), "crush", "crush.json"))
	case env.Home != "":
		files = append(files, filepath.Join(env.Home, ".local", "share", "crush", "crush.json"))
	}
	if project == "" {
		return files
	}
	for _, d := range input.DirsRootFirst(project) {
		files = append(files, filepath.Join(d, "crush.json"), filepath.Join(d, ".crush.json"))
	}
	return append(files, filepath.Join(project, ".crush", "crush.json"))
}

// configuredWindow is the context_window the configuration gives
// provider/model (any provider's when the database names none), 0 when
// none does.
func configuredWindow(env input.Env, project, provider, model string) int64 {
	var w int64
	for _, f := range configFiles(env, project) {
		doc, _ := env.ReadConfig(f)
		providers, _ := input.ConfigValue(doc, "providers")
		byID, _ := providers.(map[string]any)
		found := map[int64]bool{}
		for id, p := range byID {
			if provider != "" && id != provider {
				continue
			}
			list, _ := input.ConfigValue(p, "models")
			if m, ok := input.ConfigModel(list, model); ok {
				if n := input.ConfigTokens(m["context_window"]); n > 0 {
					found[n] = true
				}
			}
		}
		// Providers that disagree, with none named, decide nothing.
		if len(found) == 1 {
			for n := range found {
				w = n
			}
		}
	}
	return w
}

// reportWindow hands the sink the configured window of the session's
// model. The provider is the last assistant row's (a database older than
// the provider column names none).
func reportWindow(ctx context.Context, db *sql.DB, file, session, model string, env input.Env, sink transcript.ImportSink) {
	wr, ok := sink.(transcript.WindowReporter)
	if !ok || model == "" || env.Home == "" && env.Get("CRUSH_GLOBAL_CONFIG") == "" {
		return
	}
	env.Warn = sink.Warn
	var provider string
	_ = db.QueryRowContext(ctx, `SELECT COALESCE(provider, '') FROM messages WHERE session_id = ? AND role = 'assistant'
		AND COALESCE(model, '') = ? ORDER BY created_at DESC, rowid DESC LIMIT 1`, session, model).Scan(&provider)
	project := ""
	if dir := filepath.Dir(file); filepath.Base(dir) == ".crush" {
		project = filepath.Dir(dir)
	}
	if w := configuredWindow(env, project, provider, model); w > 0 {
		wr.SetConfiguredWindow(w)
	}
}
