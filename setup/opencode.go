package setup

import (
	_ "embed"
	"encoding/json"
	"path/filepath"
	"strings"
)

// OpenCode 1.18 and Kilo 7.7 (OpenCode's code under another name) take
// JavaScript plugins, not hook commands (docs/HOOKS.md, "OpenCode and
// Kilo"): every *.js in the plugins folder of a config folder is loaded
// (~/.config/opencode/plugins/, a project's .opencode/plugins/). setup
// writes one, ctxfold.js, that runs `ctxfold hook` on
//   - experimental.session.compacting, before the summariser's request is
//     built: the fact ledger the hook prints goes into output.context,
//     which OpenCode appends to its compaction prompt;
//   - the bus event session.compacted: the compaction is noted;
//   - chat.message, each prompt: once a compaction is pending, what its
//     summary still dropped is added to the prompt as a synthetic text
//     part (the hook prints nothing otherwise).
//
// The MCP server goes under "mcp" of the client's config file.
type openCodeFlavour struct {
	// name is setup's argument, title the --client the plugin passes,
	// folder the config folder's name under ~/.config, config the config
	// file's name, project the project's config folder.
	name, title, folder, config, project string
}

var (
	openCodeFlavourOC   = openCodeFlavour{ClientOpenCode, "OpenCode", "opencode", "opencode.json", ".opencode"}
	openCodeFlavourKilo = openCodeFlavour{ClientKilo, "Kilo", "kilo", "kilo.json", ".kilo"}
)

// configDir is the client's config folder: $XDG_CONFIG_HOME/<folder>, else
// ~/.config/<folder>.
func (f openCodeFlavour) configDir(o Options) string {
	if x := o.getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, f.folder)
	}
	return filepath.Join(o.Home, ".config", f.folder)
}

// paths are the config file and the plugin file of o's scope.
func (f openCodeFlavour) paths(o Options) (config, plugin string, err error) {
	switch o.Scope {
	case ScopeUser:
		d := f.configDir(o)
		return filepath.Join(d, f.config), filepath.Join(d, "plugins", "ctxfold.js"), nil
	case ScopeProject:
		return filepath.Join(o.Project, f.config), filepath.Join(o.Project, f.project, "plugins", "ctxfold.js"), nil
	}
	return "", "", errUnknownScope(o.Scope)
}

// plan plans the plugin file and the MCP server entry.
func (f openCodeFlavour) plan(o Options) ([]*Change, error) {
	if o.Command == "" {
		o.Command = "ctxfold"
	}
	config, plugin, err := f.paths(o)
	if err != nil {
		return nil, err
	}
	p, err := planOwnFile(plugin, openCodePlugin(f, o.Command, o.Archive), o.Uninstall, "plugin")
	if err != nil {
		return nil, err
	}
	c, err := plan(config, o.Uninstall, func(obj *object) ([]string, error) {
		return mergeOpenCodeMCP(obj, o.Uninstall, openCodeServer(o.Command, f.name))
	})
	if err != nil {
		return nil, err
	}
	return []*Change{p, c}, nil
}

// openCodeServer is the "mcp" entry: a local server, its command an array
// (the client runs it without a shell). CTXFOLD_CLIENT tells `ctxfold mcp`
// which client's sessions to serve.
func openCodeServer(bin, client string) json.RawMessage {
	return marshal(struct {
		Type        string            `json:"type"`
		Command     []string          `json:"command"`
		Environment map[string]string `json:"environment"`
		Enabled     bool              `json:"enabled"`
	}{"local", []string{bin, "mcp"}, map[string]string{"CTXFOLD_CLIENT": client}, true})
}

// mergeOpenCodeMCP adds (or removes) the ctxfold server under "mcp". The
// entry is setup's when it is named ctxfold and its command is a program
// and the one argument mcp; a server named ctxfold that is not is left
// alone and reported.
func mergeOpenCodeMCP(o *object, remove bool, entry json.RawMessage) ([]string, error) {
	servers, ok := o.child("mcp")
	if !ok {
		raw, _ := o.get("mcp")
		return nil, notObject("mcp", raw, "an object")
	}
	v, present := servers.get(ServerName)
	var s struct {
		Command []string `json:"command"`
	}
	mine := present && json.Unmarshal(v, &s) == nil && len(s.Command) == 2 && s.Command[1] == "mcp"
	var did []string
	switch {
	case remove && mine:
		servers.del(ServerName)
		did = append(did, "removed the MCP server")
	case remove && present:
		return []string{"kept the MCP server named " + ServerName + ": setup did not write it"}, nil
	case !remove && !present:
		servers.set(ServerName, entry)
		did = append(did, "added the MCP server")
	case !remove && !mine:
		did = append(did, "kept your own MCP server named "+ServerName+" (ctxfold's not installed)")
	case !remove && !sameJSON(v, entry):
		servers.set(ServerName, entry)
		did = append(did, "updated the MCP server")
	default:
		return nil, nil
	}
	setOrDrop(o, "mcp", servers)
	return did, nil
}

// inspect reads the plugin (its hooks, running the command it names) and
// the MCP server entry.
func (f openCodeFlavour) inspect(in *Installation, o Options) ([]string, error) {
	config, plugin, err := f.paths(o)
	if err != nil {
		return nil, err
	}
	want := []string{"hook experimental.session.compacting", "hook session.compacted", "hook chat.message", "mcp_server"}
	if bin, ok := readOwnCommand(plugin); ok {
		for _, ev := range []string{"experimental.session.compacting", "session.compacted", "chat.message"} {
			in.Entries = append(in.Entries, Entry{Kind: "hook", Event: ev, File: plugin,
				Argv: []string{bin, "hook", "--client", f.title, Marker}})
		}
	}
	b, err := readIfPresent(config)
	if err != nil || len(b) == 0 {
		return want, err
	}
	var doc struct {
		MCP map[string]struct {
			Command []string `json:"command"`
		} `json:"mcp"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, &FileError{config, err}
	}
	if s, ok := doc.MCP[ServerName]; ok && len(s.Command) > 0 {
		in.Entries = append(in.Entries, Entry{Kind: "mcp_server", File: config, Argv: s.Command})
	}
	return want, nil
}

// jsString is s as a JavaScript string literal (JSON's is one).
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// openCodePlugin is the plugin file for the command bin.
func openCodePlugin(f openCodeFlavour, bin string, archive bool) []byte {
	return []byte(strings.NewReplacer("{{VERSION}}", ownVersion, "{{NAME}}", f.name, "{{TITLE}}", f.title,
		"{{CTXFOLD}}", jsString(bin), "{{CLIENT}}", jsString(f.title), "{{ARCHIVE}}", archiveArg(archive)).Replace(openCodePluginJS))
}

// archiveArg is the hook's --archive argument in a plugin's argument
// list (setup --archive), "" without it.
func archiveArg(archive bool) string {
	if archive {
		return `, "--archive"`
	}
	return ""
}

var openCodeClient = &Client{
	Name: ClientOpenCode, Title: "OpenCode", Program: "opencode", Folder: ".config/opencode", Format: "opencode",
	Files: func(o Options) ([]string, error) {
		a, b, err := openCodeFlavourOC.paths(o)
		return []string{a, b}, err
	},
	Plan:    openCodeFlavourOC.plan,
	Inspect: openCodeFlavourOC.inspect,
}

// ClientOpenCode is OpenCode's name in setup.
const ClientOpenCode = "opencode"

// openCodePluginJS is the plugin's template (OpenCode's and Kilo's).
//
//go:embed opencode_plugin.js
var openCodePluginJS string

// OpenCodePlan plans the changes to OpenCode's files. Nothing is written.
func OpenCodePlan(o Options) ([]*Change, error) { return openCodeFlavourOC.plan(o) }
