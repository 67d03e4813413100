package setup

import (
	"path/filepath"
)

// ClientCopilot is GitHub Copilot CLI's name as setup's argument.
const ClientCopilot = "copilot"

// copilotHooks are the GitHub Copilot CLI 1.0.102 hooks (docs/HOOKS.md,
// "GitHub Copilot CLI"), under Claude Code's PascalCase names: the client
// then sends Claude Code's snake_case fields with hook_event_name (under
// its own camelCase names it sends no event name). PreCompact runs before
// every compaction, manual or automatic (it carries transcript_path);
// UserPromptSubmit on each prompt, whose top-level additionalContext the
// client appends to the prompt. It has no hook after a compaction, and
// its sessionStart sources are new, startup and resume only.
var copilotHooks = []hookSpec{
	{"PreCompact", ""},
	{"UserPromptSubmit", ""},
}

// copilotHome is Copilot CLI's folder: $COPILOT_HOME, else ~/.copilot.
func (o Options) copilotHome() string { return o.home("COPILOT_HOME", ".copilot") }

// copilotPaths are the hooks file ctxfold keeps in the folder Copilot
// loads personal hooks from (its own file: the client rewrites config.json
// and settings.json may hold comments) and the user's MCP servers file.
func copilotPaths(o Options) (hooks, mcp string) {
	h := o.copilotHome()
	return filepath.Join(h, "hooks", "ctxfold.json"), filepath.Join(h, "mcp-config.json")
}

// copilotServer is the mcpServers entry of mcp-config.json, as `copilot
// mcp add` writes one (type local, tools ["*"]). Copilot starts the server
// with its own environment, COPILOT_AGENT_SESSION_ID included (recorded
// with 1.0.102); COPILOT_HOME is named so that the server looks where the
// client keeps its sessions.
func copilotServer(bin, home string) []byte {
	return marshal(struct {
		Type    string            `json:"type"`
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
		Tools   []string          `json:"tools"`
	}{"local", bin, []string{"mcp"}, map[string]string{"CTXFOLD_CLIENT": "copilot", "CTXFOLD_SESSION_VAR": "COPILOT_AGENT_SESSION_ID", "COPILOT_HOME": home}, []string{"*"}})
}

// Copilot plans the changes to GitHub Copilot CLI's files in its folder:
// the hooks in hooks/ctxfold.json, the MCP server in mcp-config.json.
func Copilot(o Options) ([]*Change, error) {
	hooksPath, mcpPath := copilotPaths(o)
	if err := userOnly(o, ClientCopilot, hooksPath); err != nil {
		return nil, err
	}
	if o.Command == "" {
		o.Command = "ctxfold"
	}
	hooks, err := plan(hooksPath, o.Uninstall, func(obj *object) ([]string, error) {
		return mergeHooks(obj, o.Command, hookLine(o, "hook --client Copilot"), o.Uninstall, hookSet{copilotHooks, hookTimeout})
	})
	if err != nil {
		return nil, err
	}
	mcp, err := plan(mcpPath, o.Uninstall, func(obj *object) ([]string, error) {
		return mergeMCPServer(obj, o.Uninstall, copilotServer(o.Command, o.copilotHome()))
	})
	if err != nil {
		return nil, err
	}
	return []*Change{hooks, mcp}, nil
}

// copilotClient is GitHub Copilot CLI: a hooks file of ctxfold's own and
// the user's mcp-config.json, in $COPILOT_HOME (else ~/.copilot).
var copilotClient = &Client{
	Name: ClientCopilot, Title: "Copilot", Program: "copilot", Folder: ".copilot", FolderEnv: "COPILOT_HOME", Format: "copilot",
	Files: func(o Options) ([]string, error) {
		h, m := copilotPaths(o)
		return []string{h, m}, nil
	},
	Plan: Copilot,
	Inspect: func(in *Installation, o Options) ([]string, error) {
		h, m := copilotPaths(o)
		if err := in.readJSON(h, copilotHooks, false); err != nil {
			return nil, err
		}
		return expected(copilotHooks, false), in.readJSON(m, nil, false)
	},
}
