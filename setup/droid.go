package setup

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ClientDroid is Factory Droid's name for setup.
const ClientDroid = "droid"

// droidHooks are the Factory Droid 0.215 hooks (docs/HOOKS.md, "Factory
// Droid"). Droid runs no hook around its automatic compaction, so
// ctxfold's Droid dialect looks for the compaction record itself on
// PostToolUse (every tool call; its additionalContext reaches the model
// in the same turn, right after the tool's result) and UserPromptSubmit
// (each prompt of an interactive session; `droid exec` runs none).
// PreCompact runs before a manual /compact only: it keeps the turns
// about to be folded in ctxfold's cache session.
var droidHooks = []hookSpec{
	{"PreCompact", ""},
	{"UserPromptSubmit", ""},
	{"PostToolUse", "*"},
}

// droidServer is the mcpServers entry of Droid's mcp.json. Droid starts
// the server in the session's directory and passes it no session id;
// CTXFOLD_CLIENT tells ctxfold mcp to serve that directory's newest Droid
// session.
func droidServer(bin string) []byte {
	return marshal(struct {
		Type    string            `json:"type"`
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
	}{"stdio", bin, []string{"mcp"}, map[string]string{"CTXFOLD_CLIENT": "droid"}})
}

// droidFolder is the .factory folder of the scope: the user's or the
// project's (Droid reads both).
func droidFolder(o Options) (string, error) {
	switch o.Scope {
	case ScopeUser:
		return filepath.Join(o.Home, ".factory"), nil
	case ScopeProject:
		return filepath.Join(o.Project, ".factory"), nil
	}
	return "", fmt.Errorf("unknown scope %q", o.Scope)
}

// droidHooksFile is where ctxfold's hooks go. Droid 0.215 reads hooks from
// hooks.json (events at the top level) and from the "hooks" key of
// settings.json, an event in hooks.json replacing the same event of
// settings.json; its documentation names hooks.json and reads
// settings.json's only when there is no hooks.json. So: hooks.json when it
// exists or settings.json declares no hooks (a hooks.json setup creates
// would hide those), else settings.json; and wherever setup's hooks
// already are (an install repeated).
func droidHooksFile(folder string) (path string, topLevel bool) {
	hooksJSON, settings := filepath.Join(folder, "hooks.json"), filepath.Join(folder, "settings.json")
	declared, ours := settingsHooks(settings)
	if ours {
		return settings, false
	}
	if _, err := os.Lstat(hooksJSON); err == nil || !errors.Is(err, fs.ErrNotExist) || !declared {
		return hooksJSON, true
	}
	return settings, false
}

// settingsHooks reads settings.json's "hooks": whether it declares any,
// and whether setup's are among them (an unreadable file declares none).
func settingsHooks(path string) (declared, ours bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return false, false
	}
	var doc struct {
		Hooks map[string]json.RawMessage `json:"hooks"`
	}
	if json.Unmarshal(b, &doc) != nil || len(doc.Hooks) == 0 {
		return false, false
	}
	in := &Installation{}
	_ = in.collectJSON(path, b, droidHooks, false)
	return true, len(in.Entries) > 0
}

// Droid plans the changes to Factory Droid's files in the scope's .factory
// folder: the hooks (droidHooksFile) and mcp.json's mcpServers. Uninstall
// takes setup's hooks out of hooks.json and settings.json both.
func Droid(o Options) ([]*Change, error) {
	if o.Command == "" {
		o.Command = "ctxfold"
	}
	folder, err := droidFolder(o)
	if err != nil {
		return nil, err
	}
	cmd := hookLine(o, "hook --client Droid")
	set := hookSet{droidHooks, hookTimeout}
	var changes []*Change
	type target struct {
		path     string
		topLevel bool
	}
	hooksFile, topLevel := droidHooksFile(folder)
	targets := []target{{hooksFile, topLevel}}
	if o.Uninstall {
		targets = []target{{filepath.Join(folder, "hooks.json"), true}}
		if _, ours := settingsHooks(filepath.Join(folder, "settings.json")); ours {
			targets = append(targets, target{filepath.Join(folder, "settings.json"), false})
		}
	}
	for _, t := range targets {
		c, err := plan(t.path, o.Uninstall, func(obj *object) ([]string, error) {
			if !t.topLevel {
				return mergeHooks(obj, o.Command, cmd, o.Uninstall, set)
			}
			// hooks.json is the hooks object itself: merged as the
			// "hooks" of an object holding it.
			holder := newObject()
			holder.put("hooks", &value{obj: obj})
			return mergeHooks(holder, o.Command, cmd, o.Uninstall, set)
		})
		if err != nil {
			return nil, err
		}
		changes = append(changes, c)
	}
	c, err := plan(filepath.Join(folder, "mcp.json"), o.Uninstall, func(obj *object) ([]string, error) {
		return mergeMCPServer(obj, o.Uninstall, droidServer(o.Command))
	})
	if err != nil {
		return nil, err
	}
	return append(changes, c), nil
}

// droidClient is Factory Droid: hooks in hooks.json (or settings.json),
// the MCP server in mcp.json, in ~/.factory or the project's .factory.
var droidClient = &Client{
	Name: ClientDroid, Title: "Factory Droid", Program: "droid", Folder: ".factory", Format: "droid",
	Files: func(o Options) ([]string, error) {
		folder, err := droidFolder(o)
		if err != nil {
			return nil, err
		}
		return []string{filepath.Join(folder, "hooks.json"), filepath.Join(folder, "settings.json"), filepath.Join(folder, "mcp.json")}, nil
	},
	Plan: Droid,
	Inspect: func(in *Installation, o Options) ([]string, error) {
		folder, err := droidFolder(o)
		if err != nil {
			return nil, err
		}
		path, topLevel := droidHooksFile(folder)
		b, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			err = nil // no hooks file: nothing installed
		case err != nil:
			return nil, &FileError{path, err}
		case topLevel && len(b) > 0:
			err = in.collectJSON(path, append(append([]byte(`{"hooks":`), b...), '}'), droidHooks, false)
		default:
			err = in.collectJSON(path, b, droidHooks, false)
		}
		if err != nil {
			return nil, err
		}
		return expected(droidHooks, false), in.readJSON(filepath.Join(folder, "mcp.json"), nil, false)
	},
}
