package setup

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"slices"
)

// Entry is one of ctxfold's entries found in a client's settings: what
// `ctxfold doctor` checks runs.
type Entry struct {
	// Kind is "status_line", "hook" or "mcp_server".
	Kind string `json:"kind"`
	// Event is a hook's event ("" otherwise).
	Event string `json:"event,omitempty"`
	File  string `json:"file"`
	// Argv is the command as the client runs it: the program, then its
	// arguments (a shell command line split as the shell would).
	Argv []string `json:"argv"`
}

// Installation is what Inspect found of ctxfold in one client's files.
type Installation struct {
	Entries []Entry `json:"entries"`
	// Missing lists the entries setup installs that are not there
	// ("hook UserPromptSubmit", "mcp_server", "status_line").
	Missing []string `json:"missing,omitempty"`
}

// Inspect reads a client's settings (the files setup changes, user scope
// or project scope as o says) and lists ctxfold's entries in them, and
// the ones setup installs that are missing. It writes nothing. A file
// that is absent holds nothing; one that cannot be parsed is an error.
func Inspect(client string, o Options) (*Installation, error) {
	c, err := Lookup(client)
	if err != nil {
		return nil, err
	}
	in := &Installation{}
	want, err := c.Inspect(in, o)
	if err != nil {
		return nil, err
	}
	for _, w := range want {
		if !slices.ContainsFunc(in.Entries, func(e Entry) bool { return e.name() == w }) {
			in.Missing = append(in.Missing, w)
		}
	}
	return in, nil
}

// expected names every entry setup installs for a client.
func expected(hooks []hookSpec, statusLine bool) []string {
	var out []string
	if statusLine {
		out = append(out, "status_line")
	}
	for _, h := range hooks {
		out = append(out, "hook "+h.event)
	}
	return append(out, "mcp_server")
}

func (e Entry) name() string {
	if e.Kind == "hook" {
		return "hook " + e.Event
	}
	return e.Kind
}

// readJSON collects the status line (when statusLine), the hooks of the
// events in hooks, and an mcpServers.ctxfold entry of a settings file.
func (in *Installation) readJSON(path string, hooks []hookSpec, statusLine bool) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &FileError{path, err}
	}
	return in.collectJSON(path, b, hooks, statusLine)
}

// collectJSON is readJSON on the file's bytes b.
func (in *Installation) collectJSON(path string, b []byte, hooks []hookSpec, statusLine bool) error {
	var doc struct {
		StatusLine *struct {
			Command string `json:"command"`
		} `json:"statusLine"`
		Hooks      map[string]json.RawMessage `json:"hooks"`
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &doc); err != nil {
			return &FileError{path, err}
		}
	}
	if sl := doc.StatusLine; statusLine && sl != nil && recognise(sl.Command, "", "statusline") == ours {
		in.Entries = append(in.Entries, Entry{Kind: "status_line", File: path, Argv: shellWords(sl.Command)})
	}
	for _, h := range hooks {
		var groups []struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		}
		if json.Unmarshal(doc.Hooks[h.event], &groups) != nil {
			continue
		}
		for _, g := range groups {
			for _, c := range g.Hooks {
				if recognise(c.Command, "", "hook") == ours {
					in.Entries = append(in.Entries, Entry{Kind: "hook", Event: h.event, File: path, Argv: shellWords(c.Command)})
				}
			}
		}
	}
	if raw, ok := doc.MCPServers[ServerName]; ok {
		var srv struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		}
		if json.Unmarshal(raw, &srv) == nil && srv.Command != "" {
			in.Entries = append(in.Entries, Entry{Kind: "mcp_server", File: path, Argv: append([]string{srv.Command}, srv.Args...)})
		}
	}
	return nil
}

// readCodexConfig collects the [mcp_servers.ctxfold] table of Codex's
// config.toml.
func (in *Installation) readCodexConfig(path string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &FileError{path, err}
	}
	doc, err := decodeTOML(b)
	if err != nil {
		return &FileError{path, err}
	}
	servers, _ := doc["mcp_servers"].(map[string]any)
	srv, _ := servers[ServerName].(map[string]any)
	command, _ := srv["command"].(string)
	if command == "" {
		return nil
	}
	argv := []string{command}
	if args, ok := srv["args"].([]any); ok {
		for _, a := range args {
			if s, ok := a.(string); ok {
				argv = append(argv, s)
			}
		}
	}
	in.Entries = append(in.Entries, Entry{Kind: "mcp_server", File: path, Argv: argv})
	return nil
}
