package setup

import (
	"fmt"
	"path/filepath"
)

// geminiHooks are the Gemini CLI 0.61 hooks (docs/HOOKS.md, "Gemini CLI"):
// PreCompress fires before every compression attempt (recorded: before each
// model call of a turn, whether or not the history is then compressed), so
// the cache session is kept up to date before the client folds anything;
// BeforeAgent fires on each prompt before the turn starts and appends its
// additionalContext to the prompt, which is where the facts its last
// compression dropped reach the model. Gemini CLI has no hook after a
// compression, and its SessionStart has no compact source.
var geminiHooks = []hookSpec{
	{"PreCompress", ""},
	{"BeforeAgent", ""},
}

// geminiHookTimeout is Gemini CLI's hook timeout, in milliseconds (its
// default, 60 s); ctxfold hook bounds itself below it.
const geminiHookTimeout = 60_000

// geminiServer is the mcpServers entry of Gemini CLI's settings.json.
// Gemini CLI starts the server in the project directory with the user's
// environment (recorded with 0.61: no session id); CTXFOLD_CLIENT tells
// ctxfold mcp to serve that project's newest Gemini session. trust skips
// the confirmation of each call: the server only reads.
func geminiServer(bin string) []byte {
	return marshal(struct {
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
		Trust   bool              `json:"trust"`
	}{bin, []string{"mcp"}, map[string]string{"CTXFOLD_CLIENT": "gemini"}, true})
}

// Gemini plans the changes to Gemini CLI's settings.json: the user's
// (~/.gemini/settings.json) or the project's (.gemini/settings.json);
// hooks and MCP server live in the same file.
func Gemini(o Options) ([]*Change, error) {
	if o.Command == "" {
		o.Command = "ctxfold"
	}
	path, err := geminiPath(o)
	if err != nil {
		return nil, err
	}
	c, err := plan(path, o.Uninstall, func(obj *object) ([]string, error) {
		did, err := mergeHooks(obj, o.Command, hookLine(o, "hook --client Gemini"), o.Uninstall, hookSet{geminiHooks, geminiHookTimeout})
		if err != nil {
			return nil, err
		}
		more, err := mergeMCPServer(obj, o.Uninstall, geminiServer(o.Command))
		return append(did, more...), err
	})
	if err != nil {
		return nil, err
	}
	return []*Change{c}, nil
}

func geminiPath(o Options) (string, error) {
	switch o.Scope {
	case ScopeUser:
		return filepath.Join(o.Home, ".gemini", "settings.json"), nil
	case ScopeProject:
		return filepath.Join(o.Project, ".gemini", "settings.json"), nil
	}
	return "", fmt.Errorf("unknown scope %q", o.Scope)
}

// geminiClient is Gemini CLI: hooks and MCP server in one settings.json.
var geminiClient = &Client{
	Name: ClientGemini, Title: "Gemini CLI", Program: "gemini", Folder: ".gemini", Format: "gemini",
	Files: func(o Options) ([]string, error) {
		p, err := geminiPath(o)
		return []string{p}, err
	},
	Plan: Gemini,
	Inspect: func(in *Installation, o Options) ([]string, error) {
		path, err := geminiPath(o)
		if err != nil {
			return nil, err
		}
		return expected(geminiHooks, false), in.readJSON(path, geminiHooks, false)
	},
}
