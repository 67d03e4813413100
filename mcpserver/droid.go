package mcpserver

import (
	"path/filepath"

	"github.com/ctxfold/ctxfold/format/droid"
	"github.com/ctxfold/ctxfold/format/input"
)

// droidSession is the session of the server's project in Factory Droid's
// folder (~/.factory/sessions, or under $FACTORY_HOME_OVERRIDE): the most
// recently written one whose session_start names the server's working
// directory, else the most recently written one. Droid 0.215 starts its
// MCP servers in the session's directory and passes them no session id
// (setup droid sets CTXFOLD_CLIENT=droid).
func (l Locate) droidSession(getenv func(string) string) (string, error) {
	found, err := droid.Find(input.Env{Home: l.Home, Getenv: getenv})
	if err != nil || len(found) == 0 {
		return "", errNoTranscript
	}
	dirs := []string{l.Cwd}
	if real, err := filepath.EvalSymlinks(l.Cwd); err == nil {
		dirs = append(dirs, real)
	}
	for _, f := range found { // newest first
		for _, d := range dirs {
			if d != "" && f.Project == d {
				return f.File, nil
			}
		}
	}
	return found[0].File, nil
}
