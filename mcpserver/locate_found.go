package mcpserver

import (
	"path/filepath"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/importer"
)

// foundSession is the store (or file) of a session of the client whose
// importer format CTXFOLD_CLIENT names, as importer.Find lists them: the
// one whose id the variable CTXFOLD_SESSION_VAR names holds (Copilot CLI
// passes its MCP servers COPILOT_AGENT_SESSION_ID), else the most recently
// active one started in the server's working directory, else the most
// recently active one (the clients start their MCP servers in the project
// directory; a database opened without a session reads as its most
// recently active one: docs/LIVE.md, "Databases").
func (l Locate) foundSession(getenv func(string) string, client string) (string, error) {
	found, _ := importer.Find(input.Env{Home: l.Home, Getenv: getenv}, client)
	if len(found) == 0 {
		return "", errNoTranscript
	}
	if v := getenv("CTXFOLD_SESSION_VAR"); v != "" {
		if id := getenv(v); id != "" {
			for _, f := range found {
				if f.SessionID == id {
					return f.File, nil
				}
			}
		}
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
