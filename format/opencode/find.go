package opencode

// Where OpenCode and Kilo keep their sessions (ctxfold sessions): one
// SQLite database in the client's data folder, listed by one query of its
// session table, read-only.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/ctxfold/ctxfold/format/input"
)

// Find lists OpenCode's sessions: $XDG_DATA_HOME/opencode (default
// ~/.local/share/opencode), its opencode.db and the per-channel
// opencode-<channel>.db, and the database OPENCODE_DB names (absolute, or
// relative to the data folder), as OpenCode resolves it.
func Find(env input.Env) ([]input.Found, error) {
	return findIn(env, "opencode", env.Get("OPENCODE_DB"))
}

// FindKilo lists Kilo's sessions: Kilo is OpenCode's code under another
// name, so its data folder is kilo/ and its database kilo.db.
func FindKilo(env input.Env) ([]input.Found, error) {
	return findIn(env, "kilo", env.Get("KILO_DB"))
}

func findIn(env input.Env, name, override string) ([]input.Found, error) {
	data := env.Get("XDG_DATA_HOME")
	if data == "" {
		data = filepath.Join(env.Home, ".local", "share")
	}
	dir := filepath.Join(data, name)
	var dbs []string
	if override != "" && override != ":memory:" {
		if !filepath.IsAbs(override) {
			override = filepath.Join(dir, override)
		}
		dbs = append(dbs, override)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, name+"*.db"))
	sort.Strings(matches)
	seen := map[string]bool{}
	var out []input.Found
	var firstErr error
	for _, db := range append(dbs, matches...) {
		if seen[db] || !isSQLite(db) {
			continue
		}
		seen[db] = true
		got, err := listDB(db)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		out = append(out, got...)
	}
	return out, firstErr
}

// listDB reads a database's session table: one cheap query, no message
// read (an index-free scan of a table of one row a session).
func listDB(path string) ([]input.Found, error) {
	d := &database{path: path}
	defer d.close()
	ctx := context.Background()
	if err := d.open(ctx); err != nil {
		return nil, err
	}
	sc := d.cols["session"]
	if !sc["id"] {
		return nil, d.errorf("no session table")
	}
	col := func(name, zero string) string {
		if sc[name] {
			return fmt.Sprintf("COALESCE(%s, %s)", name, zero)
		}
		return zero
	}
	rows, err := d.db.QueryContext(ctx, fmt.Sprintf(`SELECT id, %s, %s, %s FROM session`,
		col("directory", "''"), col("time_updated", "0"), col("model", "''")))
	if err != nil {
		return nil, d.errorf("reading sessions: %s", oneLine(err))
	}
	defer rows.Close()
	var size int64
	for _, suffix := range []string{"", "-wal"} {
		if st, err := os.Stat(path + suffix); err == nil {
			size += st.Size()
		}
	}
	var out []input.Found
	for rows.Next() {
		var id, dir, model string
		var updated int64
		if err := rows.Scan(&id, &dir, &updated, &model); err != nil {
			return nil, d.errorf("reading sessions: %s", oneLine(err))
		}
		f := input.Found{File: path, SessionID: id, Project: dir, Bytes: size, Model: modelName(model)}
		if updated > 0 {
			f.Updated = time.UnixMilli(updated).UTC()
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, d.errorf("reading sessions: %s", oneLine(err))
	}
	return out, nil
}

// modelName reads the session's model column ({"id": …, "providerID": …}
// in OpenCode 1.18; absent before).
func modelName(raw string) string {
	var m struct {
		ID      string `json:"id"`
		ModelID string `json:"modelID"`
	}
	if raw == "" || json.Unmarshal([]byte(raw), &m) != nil {
		return ""
	}
	if m.ID != "" {
		return m.ID
	}
	return m.ModelID
}

// DetectKiloPath reports whether path is Kilo's database: OpenCode's
// tables in a file Kilo names kilo.db (or kilo-<channel>.db). Its content
// is OpenCode's, so an export or a database under another name imports
// as OpenCode's, the same way.
func DetectKiloPath(path string) bool {
	base := filepath.Base(path)
	return len(base) > 4 && base[:4] == "kilo" && filepath.Ext(base) == ".db" && isDatabase(path)
}
