package setup

import (
	"fmt"
	"path/filepath"
)

// qwenHooks are the Qwen Code 0.24.4 hooks (docs/HOOKS.md, "Qwen Code"):
// Claude Code's names and fields. PreCompact keeps the cache session up to
// date before the client folds anything, PostCompact marks the compaction
// pending, UserPromptSubmit injects what its <state_snapshot> dropped.
// SessionStart is left out on purpose: Qwen Code adds a SessionStart
// (source compact) hook's context to its in-memory chat only, not to the
// session file, so after a /compress run of `qwen -p` it never reaches a
// request (recorded), and the injection, recorded as delivered, would be
// lost; UserPromptSubmit's context is part of the request it sends.
var qwenHooks = []hookSpec{
	{"PreCompact", ""},
	{"PostCompact", ""},
	{"UserPromptSubmit", ""},
}

// qwenHookCommand is the hook's command line: the dialect's name is
// quoted, as the client runs the command through a shell.
const qwenHookCommand = "hook --client 'Qwen Code'"

// qwenServer is the mcpServers entry of Qwen Code's settings.json (its
// MCPServerConfig: command, args, env, trust, alwaysLoadTools). Qwen Code
// starts the server in the project directory and passes it no session id;
// CTXFOLD_CLIENT tells ctxfold mcp to serve that project's newest Qwen
// Code session. trust skips the confirmation of each call (the server
// only reads); alwaysLoadTools offers the three tools to the model
// directly, where Qwen Code would otherwise hide an MCP server's tools
// behind its tool_search/tool_call bridge (recorded with 0.24.4).
func qwenServer(bin string) []byte {
	return marshal(struct {
		Command         string            `json:"command"`
		Args            []string          `json:"args"`
		Env             map[string]string `json:"env"`
		Trust           bool              `json:"trust"`
		AlwaysLoadTools bool              `json:"alwaysLoadTools"`
	}{bin, []string{"mcp"}, map[string]string{"CTXFOLD_CLIENT": qwenFormat}, true, true})
}

// Qwen plans the changes to Qwen Code's settings.json: the user's
// (~/.qwen/settings.json, or under $QWEN_HOME as the client reads it) or
// the project's (.qwen/settings.json); hooks and MCP server live in the
// same file.
func Qwen(o Options) ([]*Change, error) {
	if o.Command == "" {
		o.Command = "ctxfold"
	}
	path, err := qwenPath(o)
	if err != nil {
		return nil, err
	}
	c, err := plan(path, o.Uninstall, func(obj *object) ([]string, error) {
		did, err := mergeHooks(obj, o.Command, hookLine(o, qwenHookCommand), o.Uninstall, hookSet{qwenHooks, hookTimeout})
		if err != nil {
			return nil, err
		}
		more, err := mergeMCPServer(obj, o.Uninstall, qwenServer(o.Command))
		return append(did, more...), err
	})
	if err != nil {
		return nil, err
	}
	return []*Change{c}, nil
}

func qwenPath(o Options) (string, error) {
	switch o.Scope {
	case ScopeUser:
		return filepath.Join(o.home("QWEN_HOME", ".qwen"), "settings.json"), nil
	case ScopeProject:
		return filepath.Join(o.Project, ".qwen", "settings.json"), nil
	}
	return "", fmt.Errorf("unknown scope %q", o.Scope)
}

// qwenClient is Qwen Code: hooks and MCP server in one settings.json.
var qwenClient = &Client{
	Name: ClientQwen, Title: "Qwen Code", Program: "qwen", Folder: ".qwen", FolderEnv: "QWEN_HOME", Format: qwenFormat,
	Files: func(o Options) ([]string, error) {
		p, err := qwenPath(o)
		return []string{p}, err
	},
	Plan: Qwen,
	Inspect: func(in *Installation, o Options) ([]string, error) {
		path, err := qwenPath(o)
		if err != nil {
			return nil, err
		}
		return expected(qwenHooks, false), in.readJSON(path, qwenHooks, false)
	},
}

// qwenFormat is the importer's name of Qwen Code's chats: the MCP server's
// CTXFOLD_CLIENT, by which it finds the session (importer.Find).
const qwenFormat = "qwen-code"
