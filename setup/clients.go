package setup

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Client is one agent setup knows: where its settings live, how ctxfold's
// entries are merged into them, and how they are read back (`ctxfold
// doctor`). A new agent is one file in this package holding its Client,
// and one line in clients.
type Client struct {
	// Name is setup's argument ("claude-code").
	Name string
	// Title names the client in messages and in the hook's injected line.
	Title string
	// Program is the executable the client runs as ("claude"), Folder
	// its settings folder under HOME (".claude"), FolderEnv the variable
	// that moves it ("CODEX_HOME"; "" none): doctor's "installed".
	Program, Folder, FolderEnv string
	// Format is the importer's name of the client's transcripts (doctor
	// tells which client a hook trace is of).
	Format string
	// Files lists the files Plan may change: Run holds setup's lock on
	// their folders from the plan to the last write.
	Files func(o Options) ([]string, error)
	// Plan plans the changes (Options.Uninstall: the removal).
	Plan func(o Options) ([]*Change, error)
	// Inspect reads ctxfold's entries from the client's files into in and
	// returns the ones setup installs (Entry.name spelling).
	Inspect func(in *Installation, o Options) (want []string, err error)
	// Note, when set, is said after an install (Codex's hook review).
	Note string
}

// clients are the agents setup knows, in the order doctor lists them.
var clients = []*Client{
	claudeCodeClient,
	codexClient,
	geminiClient,
	qwenClient,
	copilotClient,
	droidClient,
	openCodeClient,
	kiloClient,
	piClient,
}

// Clients lists the agents setup knows.
func Clients() []*Client { return clients }

// ClientNames lists their names, for usage and completion.
func ClientNames() []string {
	names := make([]string, len(clients))
	for i, c := range clients {
		names[i] = c.Name
	}
	return names
}

// Lookup finds the client setup knows by name.
func Lookup(name string) (*Client, error) {
	for _, c := range clients {
		if c.Name == name {
			return c, nil
		}
	}
	return nil, fmt.Errorf("unknown client %q (want %s)", name, orList(ClientNames()))
}

// orList spells names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Home is the client's settings folder.
func (c *Client) Home(o Options) string { return o.home(c.FolderEnv, c.Folder) }

// getenv reads the environment Options carries ("" without one).
func (o Options) getenv(key string) string {
	if o.Getenv == nil {
		return ""
	}
	return o.Getenv(key)
}

// home is a client's folder: the variable env names when it is set to an
// absolute path, else folder under HOME.
func (o Options) home(env, folder string) string {
	if h := o.getenv(env); h != "" && filepath.IsAbs(h) {
		return h
	}
	return filepath.Join(o.Home, folder)
}

// userOnly refuses --project for a client whose settings are the user's
// only.
func userOnly(o Options, client, where string) error {
	if o.Scope != ScopeUser {
		return errors.New(client + ": only --user is supported (the hooks live in " + where + ")")
	}
	return nil
}
