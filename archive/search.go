package archive

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
)

// SearchOptions say what to look for in the archive.
type SearchOptions struct {
	// Query is an FTS5 query: words (all must occur), "a phrase",
	// prefix*, OR, NOT (docs/ARCHIVE.md, "Queries").
	Query string
	// Client keeps only this client's sessions ("" all).
	Client string
	// Since keeps only nodes created at or after it (zero: all).
	Since time.Time
	// Limit bounds the hits (20 when 0), best first.
	Limit int
}

// Hit is one node of an archived session that matches.
type Hit struct {
	Client string `json:"client"`
	// File is the client's transcript (it may be gone since).
	File      string `json:"file"`
	SessionID string `json:"session_id,omitempty"`
	// Session is the archived session directory (render it with --head
	// NodeID); Version is true for a kept older version of the file.
	Session string `json:"session"`
	Version bool   `json:"version"`
	NodeID  string `json:"node_id"`
	Role    string `json:"role"`
	// Status is where the node stands relative to the session's view
	// from its HEAD (render.Classifier): visible, covered, off-branch or
	// relic.
	Status  string `json:"status"`
	Time    string `json:"time"`
	Line    int    `json:"line"`
	Snippet string `json:"snippet"`
}

// QueryError is a query FTS5 does not accept.
type QueryError struct {
	Query string
	Err   error
}

func (e *QueryError) Error() string { return fmt.Sprintf("query %q: %v", e.Query, e.Err) }
func (e *QueryError) Unwrap() error { return e.Err }

// NoIndexError is an archive without an index yet.
type NoIndexError struct{ Dir string }

func (e *NoIndexError) Error() string {
	return fmt.Sprintf("%s holds no archive index yet: run ctxfold archive first", e.Dir)
}

// Search finds the archived nodes matching opts.Query, best first (FTS5's
// bm25 rank). An index that does not check out is rebuilt from the
// archive (under its lock) and the search run again: never trusted.
func Search(ctx context.Context, root string, opts SearchOptions) ([]Hit, error) {
	p := filepath.Join(root, IndexFile)
	if _, err := os.Lstat(p); err != nil {
		return nil, &NoIndexError{Dir: root}
	}
	hits, err := query(ctx, p, opts)
	var qe *QueryError
	if err == nil || errors.As(err, &qe) || ctx.Err() != nil {
		return hits, err
	}
	// The index failed to answer: check it, rebuild it if it does not
	// check out, and ask once more.
	unlock, lerr := Lock(ctx, root)
	if lerr != nil {
		return nil, lerr
	}
	idx, _, oerr := OpenIndex(root, false)
	if oerr == nil {
		idx.Close()
	}
	unlock()
	if oerr != nil {
		return nil, oerr
	}
	return query(ctx, p, opts)
}

// query runs the search on the index at p and classifies each hit.
func query(ctx context.Context, p string, opts SearchOptions) ([]Hit, error) {
	if why := checkQuick(p); why != "" {
		return nil, errors.New("the archive index does not check out: " + why)
	}
	db, err := sql.Open("sqlite", "file:"+p+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	limit := opts.Limit
	if limit <= 0 {
		limit = 20
	}
	q := `SELECT s.client, s.file, s.session_id, s.dir, n.node_id, n.role, n.created_at, n.line
FROM fts JOIN nodes n ON n.id = fts.rowid JOIN sessions s ON s.id = n.session
WHERE fts MATCH ?`
	args := []any{opts.Query}
	if opts.Client != "" {
		q += ` AND s.client = ?`
		args = append(args, opts.Client)
	}
	if !opts.Since.IsZero() {
		q += ` AND n.created_at >= ?`
		args = append(args, opts.Since.UTC().Format("2006-01-02T15:04:05"))
	}
	q += ` ORDER BY rank LIMIT ?`
	args = append(args, limit)
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, classifyErr(opts.Query, err)
	}
	defer rows.Close()
	var hits []Hit
	for rows.Next() {
		var h Hit
		var rel string
		if err := rows.Scan(&h.Client, &h.File, &h.SessionID, &rel, &h.NodeID, &h.Role, &h.Time, &h.Line); err != nil {
			return nil, err
		}
		h.Session = filepath.Join(filepath.Dir(p), rel)
		h.Version = filepath.Base(filepath.Dir(rel)) == "versions"
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, classifyErr(opts.Query, err)
	}
	classify(hits, newSnipper(opts.Query))
	return hits, nil
}

// checkQuick is checkIndex's cheap part for a reader: the header and
// schema. A damaged page deeper in fails the query itself.
func checkQuick(p string) string {
	db, err := sql.Open("sqlite", "file:"+p+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return err.Error()
	}
	defer db.Close()
	var version string
	if err := db.QueryRow(`SELECT value FROM meta WHERE key='schema_version'`).Scan(&version); err != nil {
		return err.Error()
	}
	if version != indexVersion {
		return "not an index of this version"
	}
	return ""
}

// classifyErr tells a query FTS5 refuses from a failing index.
func classifyErr(q string, err error) error {
	msg := err.Error()
	if strings.Contains(msg, "fts5: syntax error") || strings.Contains(msg, "no such column") ||
		strings.Contains(msg, "unterminated string") || strings.Contains(msg, "unknown special query") {
		return &QueryError{Query: q, Err: errors.New(strings.TrimPrefix(msg, "SQL logic error: "))}
	}
	return err
}

// classify sets each hit's Status from its session's view (one dag.Open
// and render.Build per session among the hits), and its Snippet from its
// node there (the index keeps no text).
func classify(hits []Hit, snip *snipper) {
	bySession := map[string][]int{}
	var order []string
	for i, h := range hits {
		if _, ok := bySession[h.Session]; !ok {
			order = append(order, h.Session)
		}
		bySession[h.Session] = append(bySession[h.Session], i)
	}
	for _, dir := range order {
		status, done, err := classifier(dir)
		for _, i := range bySession[dir] {
			hits[i].Status = StatusUnreadable
			if err != nil {
				continue
			}
			if k, ok := done.Lookup(hits[i].NodeID); ok {
				hits[i].Status = status(k)
				hits[i].Snippet = snip.of(done.S, k)
			}
		}
		if err == nil {
			done.S.Close()
		}
	}
}

// StatusUnreadable is a hit whose archived session could not be opened
// to classify it (removed or damaged by hand since it was indexed; run
// ctxfold archive --reindex): the hit is still shown, never dropped.
const StatusUnreadable = "unreadable"

// classifier opens dir's view from its HEAD.
func classifier(dir string) (func(int) string, *dag.Graph, error) {
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		return nil, nil, err
	}
	v, err := render.Build(g, "", false)
	if err != nil {
		g.S.Close()
		return nil, nil, err
	}
	return render.Classifier(v), g, nil
}
