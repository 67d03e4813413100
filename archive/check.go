package archive

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// The codes of CheckIndex's findings (docs/VERIFY.md, "Archive index").
const (
	// CodeIndexDamaged: the index does not check out (SQLite's
	// quick_check, FTS5's integrity-check, the schema version) or is
	// missing. Fix: ctxfold archive --reindex.
	CodeIndexDamaged = "archive_index_damaged"
	// CodeIndexMismatch: what the index holds of a session is not what
	// the session holds (a node id, a line, a role, a node without its
	// text). Fix: ctxfold archive --reindex.
	CodeIndexMismatch = "archive_index_mismatch"
	// CodeIndexOrphan: the index holds a session the archive no longer
	// has. Fix: ctxfold archive --reindex.
	CodeIndexOrphan = "archive_index_orphan"
	// CodeIndexBehind (a warning): a session holds nodes past what the
	// index holds of it, which is a prefix of them (a run killed between
	// archiving and indexing). Fix: ctxfold archive.
	CodeIndexBehind = "archive_index_behind"
)

// Finding is one way the index disagrees with the archive.
type Finding struct {
	Code string
	// Session is the archived session directory at fault ("" for the
	// index as a whole); File its nodes file and Line the line in it
	// (0: none).
	Session string
	File    string
	Line    int
	NodeID  string
	Msg     string
	Warning bool
}

// CheckResult is what CheckIndex found: the sessions and nodes it
// compared and every disagreement.
type CheckResult struct {
	Index    string
	Sessions int
	Nodes    int
	Findings []Finding
}

// OK reports whether the index has no error (warnings allowed).
func (r *CheckResult) OK() bool {
	for _, f := range r.Findings {
		if !f.Warning {
			return false
		}
	}
	return true
}

// NotArchiveError is a directory that holds no archive.
type NotArchiveError struct{ Dir string }

func (e *NotArchiveError) Error() string {
	return fmt.Sprintf("%s is no archive (no live/ directory): run ctxfold archive, or give --archive-dir", e.Dir)
}

// Sessions lists every archived session directory under root (each
// entry's session and its kept versions), in a stable order. Entries a
// run left before writing their origin are not archived yet.
func Sessions(root string) ([]string, error) {
	if st, err := os.Stat(filepath.Join(root, "live")); err != nil || !st.IsDir() {
		return nil, &NotArchiveError{Dir: root}
	}
	entries, err := filepath.Glob(filepath.Join(root, "live", "*"))
	if err != nil {
		return nil, err
	}
	sort.Strings(entries)
	var dirs []string
	for _, entry := range entries {
		if _, ok := readOrigin(entry); !ok {
			continue
		}
		ds := []string{filepath.Join(entry, "session")}
		vs, _ := filepath.Glob(filepath.Join(live.VersionsDir(entry), "*"))
		sort.Strings(vs)
		for _, d := range append(ds, vs...) {
			if _, err := store.StatNodes(d); err == nil {
				dirs = append(dirs, d)
			}
		}
	}
	return dirs, nil
}

// CheckIndex checks the archive's index against its sessions, under the
// archive's lock (a run in progress is waited for), writing nothing: the
// index must check out, and hold of every archived session exactly its
// committed nodes — ids, lines and roles, each with its text — and
// nothing else. A damaged index is reported, never repaired here
// (ctxfold archive --reindex rebuilds it).
func CheckIndex(ctx context.Context, root string) (*CheckResult, error) {
	dirs, err := Sessions(root)
	if err != nil {
		return nil, err
	}
	unlock, err := Lock(ctx, root)
	if err != nil {
		return nil, err
	}
	defer unlock()
	p := filepath.Join(root, IndexFile)
	res := &CheckResult{Index: p}
	damaged := func(msg string) (*CheckResult, error) {
		res.Findings = append(res.Findings, Finding{Code: CodeIndexDamaged, Msg: msg})
		return res, nil
	}
	if _, err := os.Lstat(p); err != nil {
		return damaged("no index: " + err.Error())
	}
	if why := checkIndex(p); why != "" {
		return damaged("the index does not check out: " + why)
	}
	db, err := sql.Open("sqlite", "file:"+p+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return damaged(err.Error())
	}
	defer db.Close()
	rows, err := indexedSessions(ctx, db)
	if err != nil {
		return damaged(err.Error())
	}
	for _, dir := range dirs {
		rel, _ := filepath.Rel(root, dir)
		row, ok := rows[rel]
		delete(rows, rel)
		res.Sessions++
		if !ok {
			res.Findings = append(res.Findings, Finding{Code: CodeIndexBehind, Session: dir, Warning: true,
				Msg: "the session is not in the index yet"})
			continue
		}
		n, fs, err := checkSession(ctx, db, dir, row)
		if err != nil {
			return damaged(fmt.Sprintf("%s: %v", dir, err))
		}
		res.Nodes += n
		res.Findings = append(res.Findings, fs...)
	}
	var orphans []string
	for rel := range rows {
		orphans = append(orphans, rel)
	}
	sort.Strings(orphans)
	for _, rel := range orphans {
		res.Findings = append(res.Findings, Finding{Code: CodeIndexOrphan, Session: filepath.Join(root, rel),
			Msg: "the index holds a session the archive does not have"})
	}
	var nodes, texts int
	if err := db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM nodes), (SELECT count(*) FROM fts)`).Scan(&nodes, &texts); err != nil {
		return damaged(err.Error())
	}
	// Texts without their node (the sessions' findings name a node
	// without its text).
	if nodes != texts && res.OK() {
		res.Findings = append(res.Findings, Finding{Code: CodeIndexMismatch,
			Msg: fmt.Sprintf("the index holds %d nodes but %d texts", nodes, texts)})
	}
	return res, nil
}

// sessionRow is the index's row of one session: its id and the bytes of
// nodes.jsonl it says it indexed.
type sessionRow struct{ id, bytes int64 }

func indexedSessions(ctx context.Context, db *sql.DB) (map[string]sessionRow, error) {
	rows, err := db.QueryContext(ctx, `SELECT id, dir, indexed_bytes FROM sessions`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[string]sessionRow{}
	for rows.Next() {
		var r sessionRow
		var dir string
		if err := rows.Scan(&r.id, &dir, &r.bytes); err != nil {
			return nil, err
		}
		m[dir] = r
	}
	return m, rows.Err()
}

// indexedNode is what the index holds of one node.
type indexedNode struct {
	line     int
	id, role string
	hasText  bool
}

// checkSession compares the index's rows of one session with the
// session's committed nodes, line by line, and says how many it compared.
// Rows that are a prefix of the nodes are an index behind the session
// when the index says it indexed fewer bytes than the session commits (a
// run to come adds the rest), a mismatch when it says it indexed them all.
func checkSession(ctx context.Context, db *sql.DB, dir string, row sessionRow) (int, []Finding, error) {
	got, err := indexedNodes(ctx, db, row.id)
	if err != nil {
		return 0, nil, err
	}
	m, err := store.ReadMeta(dir)
	if err != nil {
		return 0, nil, err
	}
	r, err := store.OpenNodes(dir)
	if err != nil {
		return 0, nil, err
	}
	defer r.Close()
	committed := r.Stat().Size()
	if m.NodesBytes != nil {
		committed = *m.NodesBytes
	}
	br := bufio.NewReaderSize(io.NewSectionReader(r, 0, committed), 1<<20)
	line, k := 0, 0
	mismatch := func(line int, id, msg string) (int, []Finding, error) {
		return k, []Finding{{Code: CodeIndexMismatch, Session: dir, File: r.Name(), Line: line, NodeID: id, Msg: msg}}, nil
	}
	for {
		raw, rerr := br.ReadBytes('\n')
		if len(bytes.TrimSpace(raw)) > 0 {
			line++
			if err := ctx.Err(); err != nil {
				return k, nil, err
			}
			var n transcript.Node
			if err := n.UnmarshalJSON(raw); err != nil {
				return k, nil, fmt.Errorf("nodes.jsonl:%d: %w", line, err)
			}
			if k == len(got) && row.bytes >= committed {
				return mismatch(line, n.ID, fmt.Sprintf("the index says it holds the session's %d bytes but lacks this node", committed))
			}
			if k == len(got) {
				return k, []Finding{{Code: CodeIndexBehind, Session: dir, File: r.Name(), Line: line, NodeID: n.ID, Warning: true,
					Msg: fmt.Sprintf("the index holds the session's first %d nodes, the session more", k)}}, nil
			}
			g := got[k]
			switch {
			case g.line != line || g.id != n.ID:
				return mismatch(line, n.ID, fmt.Sprintf("the index has node %q at line %d here", g.id, g.line))
			case g.role != string(n.Role):
				return mismatch(line, n.ID, fmt.Sprintf("the index says role %q, the session %q", g.role, n.Role))
			case !g.hasText:
				return mismatch(line, n.ID, "the index has no text for the node")
			}
			k++
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return k, nil, rerr
		}
	}
	if k < len(got) {
		return mismatch(got[k].line, got[k].id, fmt.Sprintf("the index holds %d nodes of the session, the session %d", len(got), k))
	}
	return k, nil, nil
}

// indexedNodes is the index's rows of one session in line order, each
// with whether the full-text table holds its text.
func indexedNodes(ctx context.Context, db *sql.DB, session int64) ([]indexedNode, error) {
	rows, err := db.QueryContext(ctx, `SELECT n.line, n.node_id, n.role,
  EXISTS (SELECT 1 FROM fts WHERE fts.rowid = n.id)
FROM nodes n WHERE n.session = ? ORDER BY n.line`, session)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []indexedNode
	for rows.Next() {
		var x indexedNode
		if err := rows.Scan(&x.line, &x.id, &x.role, &x.hasText); err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, rows.Err()
}
