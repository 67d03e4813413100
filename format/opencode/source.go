package opencode

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	// Pure Go (no cgo): the database is read where ctxfold is built.
	_ "modernc.org/sqlite"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// storage reads the JSON file layout.
type storage struct {
	root string
	// only, when set, is the one session to read.
	only string
	opts Options
}

func (s *storage) close() {}

func (s *storage) readJSON(path string, v any, what string) error {
	f, err := os.Open(path)
	if err != nil {
		return &transcript.ParseError{File: path, Msg: err.Error(), Err: err}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(s.opts.Max())+1))
	if err != nil {
		return &transcript.ParseError{File: path, Msg: err.Error(), Err: err}
	}
	if len(data) > s.opts.Max() {
		return input.Errorf(path, 1, "%s is longer than the %d-byte limit (raise it with --max-line-bytes)", what, s.opts.Max())
	}
	if err := input.CheckUTF8(path, data); err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return input.Errorf(path, 1, "expected %s: %s", what, input.JSONErrorText(err))
	}
	return nil
}

// jsonFiles lists dir's *.json files in name order (OpenCode's ids sort
// by creation time).
func jsonFiles(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".json") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out
}

func (s *storage) sessions(ctx context.Context) ([]sessionInfo, error) {
	projects, err := os.ReadDir(filepath.Join(s.root, "session"))
	if err != nil {
		return nil, &transcript.ParseError{File: s.root, Msg: err.Error(), Err: err}
	}
	type ranked struct {
		sessionInfo
		created float64
	}
	var all []ranked
	for _, p := range projects {
		if !p.IsDir() {
			continue
		}
		for _, file := range jsonFiles(filepath.Join(s.root, "session", p.Name())) {
			id := strings.TrimSuffix(filepath.Base(file), ".json")
			if s.only != "" && id != s.only {
				continue
			}
			var info struct {
				ID        string `json:"id"`
				Title     string `json:"title"`
				ParentID  string `json:"parentID"`
				Directory string `json:"directory"`
				Time      struct {
					Created float64 `json:"created"`
					Updated float64 `json:"updated"`
				} `json:"time"`
			}
			if err := s.readJSON(file, &info, "an OpenCode session object"); err != nil {
				return nil, err
			}
			if info.ID != "" {
				id = info.ID
			}
			all = append(all, ranked{sessionInfo{id: id, title: info.Title, parent: info.ParentID, file: file,
				updated: info.Time.Updated, directory: info.Directory}, info.Time.Created})
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].created != all[j].created {
			return all[i].created < all[j].created
		}
		return all[i].id < all[j].id
	})
	out := make([]sessionInfo, len(all))
	for i := range all {
		out[i] = all[i].sessionInfo
	}
	if len(out) == 0 {
		return nil, input.Errorf(s.root, 0, "no session under %s", filepath.Join(s.root, "session"))
	}
	return out, nil
}

func (s *storage) messages(ctx context.Context, id string) ([]message, error) {
	var out []message
	for _, file := range jsonFiles(filepath.Join(s.root, "message", id)) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m := message{id: strings.TrimSuffix(filepath.Base(file), ".json"), file: file, line: 1}
		if err := s.readJSON(file, &m.info, "an OpenCode message object"); err != nil {
			return nil, err
		}
		if m.info.ID != "" {
			m.id = m.info.ID
		}
		for _, pf := range jsonFiles(filepath.Join(s.root, "part", m.id)) {
			var p part
			if err := s.readJSON(pf, &p, "an OpenCode part object"); err != nil {
				return nil, err
			}
			if p.ID == "" {
				p.ID = strings.TrimSuffix(filepath.Base(pf), ".json")
			}
			p.file = pf
			m.parts = append(m.parts, p)
		}
		out = append(out, m)
	}
	return out, nil
}

// database reads opencode.db, opened read-only.
type database struct {
	path string
	opts Options
	db   *sql.DB
	// columns of each table, for the schema's versions.
	cols map[string]map[string]bool
	// closeDB closes db and removes the copy read when the database's
	// folder is read-only (input.OpenSQLite).
	closeDB func()
}

func (d *database) errorf(format string, args ...any) error {
	return &transcript.ParseError{File: d.path, Msg: fmt.Sprintf(format, args...)}
}

func (d *database) open(ctx context.Context) error {
	if d.db != nil {
		return nil
	}
	abs, err := filepath.Abs(d.path)
	if err != nil {
		return d.errorf("%v", err)
	}
	db, closeDB, err := input.OpenSQLite(ctx, abs, nil)
	if err != nil {
		return d.errorf("not a readable SQLite database: %s", oneLine(err))
	}
	d.db, d.closeDB = db, closeDB
	d.cols = map[string]map[string]bool{}
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		return d.errorf("not a readable SQLite database: %s", oneLine(err))
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return d.errorf("reading the schema: %s", oneLine(err))
		}
		tables = append(tables, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return d.errorf("reading the schema: %s", oneLine(err))
	}
	for _, t := range tables {
		if t != "session" && t != "message" && t != "part" {
			continue
		}
		d.cols[t] = map[string]bool{}
		r, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_info(?)`, t)
		if err != nil {
			return d.errorf("reading table %s: %s", t, oneLine(err))
		}
		for r.Next() {
			var c string
			if r.Scan(&c) == nil {
				d.cols[t][c] = true
			}
		}
		r.Close()
	}
	for _, need := range [][2]string{{"message", "id"}, {"message", "session_id"}, {"message", "data"}, {"part", "id"}, {"part", "message_id"}, {"part", "data"}} {
		if !d.cols[need[0]][need[1]] {
			return d.errorf("not an OpenCode database: no column %s.%s (want tables session, message and part with JSON data)", need[0], need[1])
		}
	}
	return nil
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", " ") }

func (d *database) close() {
	if d.closeDB != nil {
		d.closeDB()
	}
}

func (d *database) sessions(ctx context.Context) ([]sessionInfo, error) {
	if err := d.open(ctx); err != nil {
		return nil, err
	}
	q := `SELECT session_id, '', '', 0, '' FROM message GROUP BY session_id ORDER BY session_id`
	if sc := d.cols["session"]; sc["id"] {
		col := func(name, zero string) string {
			if sc[name] {
				return fmt.Sprintf("COALESCE(%s, %s)", name, zero)
			}
			return zero
		}
		order := "id"
		if sc["time_created"] {
			order = "time_created, id"
		}
		q = fmt.Sprintf(`SELECT id, %s, %s, %s, %s FROM session ORDER BY %s`,
			col("title", "''"), col("parent_id", "''"), col("time_updated", "0"), col("directory", "''"), order)
	}
	rows, err := d.db.QueryContext(ctx, q)
	if err != nil {
		return nil, d.errorf("reading sessions: %s", oneLine(err))
	}
	defer rows.Close()
	var out []sessionInfo
	for rows.Next() {
		var s sessionInfo
		if err := rows.Scan(&s.id, &s.title, &s.parent, &s.updated, &s.directory); err != nil {
			return nil, d.errorf("reading sessions: %s", oneLine(err))
		}
		s.file = d.path
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, d.errorf("reading sessions: %s", oneLine(err))
	}
	if len(out) == 0 {
		return nil, d.errorf("no session in the database")
	}
	return out, nil
}

func (d *database) messages(ctx context.Context, id string) ([]message, error) {
	order := "id"
	if d.cols["message"]["time_created"] {
		order = "time_created, id"
	}
	rows, err := d.db.QueryContext(ctx, `SELECT id, data FROM message WHERE session_id = ? ORDER BY `+order, id)
	if err != nil {
		return nil, d.errorf("reading messages: %s", oneLine(err))
	}
	var out []message
	index := map[string]int{}
	for rows.Next() {
		var mid, data string
		if err := rows.Scan(&mid, &data); err != nil {
			rows.Close()
			return nil, d.errorf("reading messages: %s", oneLine(err))
		}
		if len(data) > d.opts.Max() {
			rows.Close()
			return nil, d.errorf("message %q: data is longer than the %d-byte limit (raise it with --max-line-bytes)", mid, d.opts.Max())
		}
		m := message{id: mid, file: d.path}
		if err := json.Unmarshal([]byte(data), &m.info); err != nil {
			rows.Close()
			return nil, d.errorf("message %q: expected an OpenCode message object in data: %s", mid, input.JSONErrorText(err))
		}
		index[mid] = len(out)
		out = append(out, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, d.errorf("reading messages: %s", oneLine(err))
	}
	prows, err := d.db.QueryContext(ctx, `SELECT p.id, p.message_id, p.data FROM part p JOIN message m ON p.message_id = m.id WHERE m.session_id = ? ORDER BY p.id`, id)
	if err != nil {
		return nil, d.errorf("reading parts: %s", oneLine(err))
	}
	defer prows.Close()
	for prows.Next() {
		var pid, mid, data string
		if err := prows.Scan(&pid, &mid, &data); err != nil {
			return nil, d.errorf("reading parts: %s", oneLine(err))
		}
		if len(data) > d.opts.Max() {
			return nil, d.errorf("part %q: data is longer than the %d-byte limit (raise it with --max-line-bytes)", pid, d.opts.Max())
		}
		var p part
		if err := json.Unmarshal([]byte(data), &p); err != nil {
			return nil, d.errorf("part %q: expected an OpenCode part object in data: %s", pid, input.JSONErrorText(err))
		}
		if p.ID == "" {
			p.ID = pid
		}
		p.file = d.path
		if i, ok := index[mid]; ok {
			out[i].parts = append(out[i].parts, p)
		}
	}
	if err := prows.Err(); err != nil {
		return nil, d.errorf("reading parts: %s", oneLine(err))
	}
	return out, nil
}
