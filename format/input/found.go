package input

import (
	"path/filepath"
	"strings"
	"time"
)

// Env is where a format looks for the sessions a client keeps on this
// machine: the user's home and the environment the client itself reads
// (its own overrides of the default paths, such as CODEX_HOME). Tests
// pass a temporary home and a map; nothing here reads os.Getenv itself.
type Env struct {
	Home   string
	Getenv func(string) string
	// Seen, when set, is told each client configuration file an importer
	// consults (Env.ReadConfig), found or not: the live cache re-reads a
	// transcript whose client's configuration changed.
	Seen func(path string)
	// Warn, when set, is told of a configuration file that exists but
	// cannot be read or parsed (Env.ReadConfig): the importer's sink's
	// Warn, so the user learns which file to fix.
	Warn func(file string, line int, msg string)
}

// ExpandHome resolves a leading ~ of a path a client's variable or
// setting names to the home, as the clients do ("~" alone and "~/…";
// "~user" is left as it is).
func (e Env) ExpandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		return filepath.Join(e.Home, p[1:])
	}
	return p
}

// Get returns the variable's value, "" when unset or when no Getenv is set.
func (e Env) Get(name string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(name)
}

// Found is one session a client keeps on this machine, as `ctxfold
// sessions` lists it and `ctxfold archive` finds it. File is what the
// other commands accept (a transcript file, or a database with
// SessionID naming one of its sessions); the rest is what the client's
// own files say cheaply (no full import): empty when unknown.
type Found struct {
	// Client is the importer's format name (claude-code, codex, …).
	Client string
	// File is the transcript file or the store holding the session.
	File string
	// SessionID is the client's id of the session; for a store holding
	// several it is what --session takes.
	SessionID string
	// Project is the working directory the session ran in.
	Project string
	// Updated is the session's last activity (the file's modification
	// time when the client records nothing finer).
	Updated time.Time
	// Model is the last model the session used.
	Model string
	// Bytes is the transcript's size (the whole store's for a database).
	Bytes int64
}

// FindFunc lists a client's sessions on this machine. A client that is
// not installed (no such folder) is no error: it returns nothing. Each
// format that knows where its client keeps sessions exports one as Find,
// and the importer's registry names it beside the format.
type FindFunc func(env Env) ([]Found, error)

// ProjectsFunc says where a client keeps the user's projects, when dir, a
// folder of session files, is one of them: root holds a folder per
// project, and each project's sessions are in sub under it ("" for the
// project's folder itself). A format that keeps one folder per project
// exports one as ProjectsOf beside Find (projectprefix reads the user's
// other projects through it: docs/ACCURACY.md, "The user's other
// projects").
type ProjectsFunc func(dir string) (root, sub string, ok bool)

// sqliteMagic opens every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// IsSQLite reports whether head (a file's first bytes) is a SQLite
// database: a client's store of several sessions, read as a whole and
// never appended to (live re-reads it whole when it or its -wal changes).
func IsSQLite(head []byte) bool {
	return len(head) >= len(sqliteMagic) && string(head[:len(sqliteMagic)]) == sqliteMagic
}
