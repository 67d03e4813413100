package mcpserver

import (
	"path/filepath"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/importer"
)

// foundSession is the store (or file) of the client's most recently
// active session started in the server's working directory, else of its
// most recently active one, as importer.Find lists them (OpenCode and Kilo
// start their MCP servers in the project directory with no session id;
// their database, opened without a session, reads as the most recently
// active one: docs/LIVE.md, "Databases").
func (l Locate) foundSession(getenv func(string) string, client string) (string, error) {
	found, _ := importer.Find(input.Env{Home: l.Home, Getenv: getenv}, client)
	if len(found) == 0 {
		return "", errNoTranscript
	}
	cwd := l.Cwd
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = real
	}
	for _, f := range found {
		if f.Project != "" && (f.Project == l.Cwd || f.Project == cwd) {
			return f.File, nil
		}
	}
	return found[0].File, nil
}
