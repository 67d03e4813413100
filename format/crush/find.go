package crush

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ctxfold/ctxfold/format/input"
)

// globalDir is Crush's global data directory, where it lists the projects
// it ran in (projects.json: each project's path and data directory):
// $CRUSH_GLOBAL_DATA, else $XDG_DATA_HOME/crush, else
// ~/.local/share/crush (its config.GlobalConfigData).
func globalDir(env input.Env) string {
	if d := env.Get("CRUSH_GLOBAL_DATA"); d != "" {
		return d
	}
	if d := env.Get("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "crush")
	}
	return filepath.Join(env.Home, ".local", "share", "crush")
}

// Find lists the sessions of every project Crush's projects.json names:
// each project keeps its own database (<data dir>/crush.db, .crush in the
// project by default). A project Crush never registered there (one run
// before it kept the list, or whose list was removed) cannot be found
// without searching the disk, which Find does not do. No list is no error.
func Find(env input.Env) ([]input.Found, error) {
	data, err := os.ReadFile(filepath.Join(globalDir(env), "projects.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var list struct {
		Projects []struct {
			Path    string `json:"path"`
			DataDir string `json:"data_dir"`
		} `json:"projects"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, input.Errorf(filepath.Join(globalDir(env), "projects.json"), 0, "not Crush's project list: %s", input.JSONErrorText(err))
	}
	var out []input.Found
	for _, p := range list.Projects {
		dir := p.DataDir
		if dir == "" {
			dir = filepath.Join(p.Path, ".crush")
		} else if !filepath.IsAbs(dir) {
			dir = filepath.Join(p.Path, dir)
		}
		out = append(out, sessionsIn(filepath.Join(dir, "crush.db"), p.Path)...)
	}
	return out, nil
}

// sessionsIn lists one database's sessions (none when it cannot be read),
// but a sub-agent's, which imports with its caller's (subagent.go: its id
// "<message>$$<call>", or the call id alone, a call of its parent).
func sessionsIn(file, project string) []input.Found {
	st, err := os.Stat(file)
	if err != nil || !st.Mode().IsRegular() {
		return nil
	}
	ctx := context.Background()
	db, cleanup, err := openReadOnly(ctx, file)
	if err != nil {
		return nil
	}
	defer cleanup()
	rows, err := db.QueryContext(ctx, `SELECT s.id, s.updated_at, COALESCE((SELECT model FROM messages m WHERE m.session_id = s.id
		AND m.role = 'assistant' AND m.model IS NOT NULL ORDER BY m.created_at DESC, m.rowid DESC LIMIT 1), '') FROM sessions s
		WHERE NOT ((instr(s.id, '$$') > 1 OR EXISTS (SELECT 1 FROM messages c WHERE c.session_id = s.parent_session_id
			AND c.role = 'assistant' AND instr(c.parts, '"id":' || json_quote(s.id)) > 0))
			AND s.parent_session_id IN (SELECT id FROM sessions))`)
	if err != nil {
		return nil
	}
	defer rows.Close()
	var out []input.Found
	for rows.Next() {
		var f input.Found
		var updated int64
		if rows.Scan(&f.SessionID, &updated, &f.Model) != nil {
			continue
		}
		f.File, f.Project, f.Bytes = file, project, st.Size()
		f.Updated = time.Unix(updated, 0)
		if updated > 1e11 { // milliseconds (the schema's comment) rather than seconds
			f.Updated = time.UnixMilli(updated)
		}
		out = append(out, f)
	}
	return out
}
