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

	"github.com/cespare/xxhash/v2"
	// The SQLite driver, with FTS5 compiled in.
	_ "modernc.org/sqlite"

	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/osfile"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// IndexFile is the full-text index beside the archive's entries.
const IndexFile = "index.sqlite"

// indexSchema is the index's layout; a different stored version is
// rebuilt. sessions records, per archived session directory (relative to
// the archive), the committed bytes of nodes.jsonl it indexed, as the
// store's hash chain names them (store.Meta): an append is then proved by
// store.ChainExtends and only its bytes are read (O(new)).
const indexSchema = `
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE sessions(id INTEGER PRIMARY KEY, dir TEXT UNIQUE NOT NULL, client TEXT NOT NULL,
  file TEXT NOT NULL, session_id TEXT NOT NULL, indexed_bytes INTEGER NOT NULL,
  indexed_lines INTEGER NOT NULL, indexed_sha256 TEXT NOT NULL, hash_state TEXT NOT NULL);
CREATE TABLE nodes(id INTEGER PRIMARY KEY, session INTEGER NOT NULL, node_id TEXT NOT NULL,
  role TEXT NOT NULL, created_at TEXT NOT NULL, line INTEGER NOT NULL);
CREATE INDEX nodes_session ON nodes(session, line);
CREATE VIRTUAL TABLE fts USING fts5(text, content='', contentless_delete=1);
INSERT INTO fts(fts, rank) VALUES('hashsize', 67108864);
INSERT INTO meta VALUES ('schema_version', '` + indexVersion + `');
`

// The FTS5 table's in-memory hash of pending terms is flushed as a new
// segment when it passes hashsize (1 MB by default): at 64 MB a 40 MB
// session makes one segment instead of dozens, and the merges of those
// segments were a growing share of a large first archive (docs/
// BENCHMARKS.md, "archive"). It bounds the index's memory as the page
// cache does.

// indexVersion is the index layout's version. Version 2 made fts
// contentless: the text is the archive's already (nodes.jsonl), and
// storing it again in SQLite was three quarters of the index's bytes and
// most of a first archive's cost beyond the import (docs/BENCHMARKS.md,
// "archive"); a hit's snippet is cut from its node in the session.
const indexVersion = "2"

// Index is the archive's full-text index (SQLite FTS5).
type Index struct {
	db   *sql.DB
	root string
	// Rebuilt is how many nodes OpenIndex indexed building the index
	// afresh (Counts.Indexed includes them).
	Rebuilt int
}

// OpenIndex opens the index of the archive at root for writing (the
// caller holds the archive's lock), rebuilding it from the archive alone
// when rebuild is set or when it does not check out: a corrupt or foreign
// index is never trusted (SQLite's quick_check, the schema version).
// rebuilt says whether it was.
func OpenIndex(root string, rebuild bool) (idx *Index, rebuilt bool, err error) {
	p := filepath.Join(root, IndexFile)
	if !rebuild && !leftAsChecked(root) {
		if why := checkIndex(p); why != "" {
			rebuild = true
		}
	}
	// Until Close records it again, the index is checked in full.
	_ = os.Remove(filepath.Join(root, checkedFile))
	if rebuild {
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			if err := os.Remove(p + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, false, fmt.Errorf("archive index: %w", err)
			}
		}
	}
	// A 64 MiB page cache: FTS5's segment merges re-read what the index
	// wrote, and the 2 MiB default made a 1 GB first archive pay for it.
	db, err := sql.Open("sqlite", "file:"+p+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=cache_size(-65536)")
	if err != nil {
		return nil, false, fmt.Errorf("archive index: %w", err)
	}
	db.SetMaxOpenConns(1)
	idx = &Index{db: db, root: root}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name='meta'`).Scan(&n); err != nil {
		db.Close()
		return nil, false, fmt.Errorf("archive index: %w", err)
	}
	if n == 0 {
		if _, err := db.Exec(indexSchema); err != nil {
			db.Close()
			return nil, false, fmt.Errorf("archive index: %w", err)
		}
		if err := idx.reindexAll(); err != nil {
			db.Close()
			return nil, false, err
		}
		// A first index is no rebuild; a damaged or --reindex one is.
		return idx, rebuild, nil
	}
	return idx, false, nil
}

// checkIndex says why the index file at p is not to be trusted, "" when
// it checks out or does not exist yet.
func checkIndex(p string) string {
	if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
		return ""
	}
	db, err := sql.Open("sqlite", "file:"+p+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return err.Error()
	}
	defer db.Close()
	var res, version string
	if err := db.QueryRow(`PRAGMA quick_check`).Scan(&res); err != nil {
		return err.Error()
	}
	if res != "ok" {
		return res
	}
	if err := db.QueryRow(`SELECT value FROM meta WHERE key='schema_version'`).Scan(&version); err != nil || version != indexVersion {
		return "not an index of this version"
	}
	// FTS5's own structure check: a damaged full-text b-tree passes
	// quick_check.
	if _, err := db.Exec(`INSERT INTO fts(fts) VALUES('integrity-check')`); err != nil {
		return err.Error()
	}
	return ""
}

// Close closes the index and records the file as the run left it, checked.
func (x *Index) Close() error {
	if err := x.db.Close(); err != nil {
		return err
	}
	if sum, ok := indexSum(x.root); ok {
		_ = os.WriteFile(filepath.Join(x.root, checkedFile), []byte(sum), 0o600)
	}
	return nil
}

// checkedFile records the XXH64 of index.sqlite as the last run that
// checked it left it. The full check (quick_check and FTS5's
// integrity-check, which re-reads every indexed text) costs about a second
// per 20 MB of index on a loaded machine, hashing the file a fraction of
// that: an index byte for byte as a run left it, no write-ahead log
// pending, is not checked again; any change since (a damaged or replaced
// file) brings the full check back.
const checkedFile = "index.checked"

// leftAsChecked reports whether the index is as the last run left it.
func leftAsChecked(root string) bool {
	want, err := os.ReadFile(filepath.Join(root, checkedFile))
	if err != nil {
		return false
	}
	if st, err := os.Lstat(filepath.Join(root, IndexFile+"-wal")); err == nil && st.Size() > 0 {
		return false
	}
	sum, ok := indexSum(root)
	return ok && sum == string(want)
}

// indexSum is the index file's size and XXH64, as a line of text.
func indexSum(root string) (string, bool) {
	f, err := osfile.OpenNoFollow(filepath.Join(root, IndexFile), os.O_RDONLY, 0)
	if err != nil {
		return "", false
	}
	defer f.Close()
	h := xxhash.New()
	n, err := io.Copy(h, bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return "", false
	}
	return fmt.Sprintf("%d %016x\n", n, h.Sum64()), true
}

// reindexAll indexes every session directory of the archive, from its
// entries alone.
func (x *Index) reindexAll() error {
	entries, err := filepath.Glob(filepath.Join(x.root, "live", "*"))
	if err != nil {
		return err
	}
	for _, entry := range entries {
		o, ok := readOrigin(entry)
		if !ok {
			continue // not (yet) an archived entry: a run died before its origin
		}
		n, err := x.UpdateEntry(context.Background(), entry, o)
		x.Rebuilt += n
		if err != nil {
			return err
		}
	}
	return nil
}

// UpdateEntry indexes what the entry's sessions (its current session and
// every kept version) hold beyond what the index has, and says how many
// nodes it added.
func (x *Index) UpdateEntry(ctx context.Context, entry string, o Origin) (int, error) {
	dirs := []string{filepath.Join(entry, "session")}
	vs, _ := filepath.Glob(filepath.Join(live.VersionsDir(entry), "*"))
	sort.Strings(vs)
	dirs = append(dirs, vs...)
	total := 0
	for _, d := range dirs {
		if _, err := store.StatNodes(d); err != nil {
			continue
		}
		n, err := x.updateSession(ctx, d, o)
		total += n
		if err != nil {
			return total, fmt.Errorf("archive index: %s: %w", d, err)
		}
	}
	return total, nil
}

type indexed struct {
	id           int64
	bytes, lines int64
	sha, state   string
}

// updateSession brings the index of one session directory up to its
// committed bytes: nothing when they are the indexed ones, their tail
// when the hash chain proves an append, all of them afresh otherwise.
func (x *Index) updateSession(ctx context.Context, dir string, o Origin) (int, error) {
	rel, err := filepath.Rel(x.root, dir)
	if err != nil {
		return 0, err
	}
	m, err := store.ReadMeta(dir)
	if err != nil {
		return 0, err
	}
	committed := int64(-1)
	if m.NodesBytes != nil {
		committed = *m.NodesBytes
	}
	tx, err := x.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var old indexed
	row := tx.QueryRow(`SELECT id, indexed_bytes, indexed_lines, indexed_sha256, hash_state FROM sessions WHERE dir=?`, rel)
	switch err := row.Scan(&old.id, &old.bytes, &old.lines, &old.sha, &old.state); {
	case errors.Is(err, sql.ErrNoRows):
		res, err := tx.Exec(`INSERT INTO sessions(dir, client, file, session_id, indexed_bytes, indexed_lines, indexed_sha256, hash_state) VALUES (?,?,?,?,0,0,'','')`,
			rel, o.Client, o.File, o.SessionID)
		if err != nil {
			return 0, err
		}
		if old.id, err = res.LastInsertId(); err != nil {
			return 0, err
		}
	case err != nil:
		return 0, err
	}
	if m.NodesSHA256 != "" && old.sha == m.NodesSHA256 && old.bytes == committed {
		return 0, nil
	}
	r, err := store.OpenNodes(dir)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	if committed < 0 {
		committed = r.Stat().Size()
	}
	from, line := old.bytes, old.lines
	if from == 0 || from > committed || !x.provedAppend(r, m, old, committed) {
		// Not a proved append: the session is indexed afresh.
		if _, err := tx.Exec(`DELETE FROM fts WHERE rowid IN (SELECT id FROM nodes WHERE session=?)`, old.id); err != nil {
			return 0, err
		}
		if _, err := tx.Exec(`DELETE FROM nodes WHERE session=?`, old.id); err != nil {
			return 0, err
		}
		from, line = 0, 0
	}
	n, lines, err := indexLines(ctx, tx, old.id, io.NewSectionReader(r, from, committed-from), line)
	if err != nil {
		return 0, err
	}
	if _, err := tx.Exec(`UPDATE sessions SET client=?, file=?, session_id=?, indexed_bytes=?, indexed_lines=?, indexed_sha256=?, hash_state=? WHERE id=?`,
		o.Client, o.File, o.SessionID, committed, lines, m.NodesSHA256, m.NodesHashState, old.id); err != nil {
		return 0, err
	}
	return n, tx.Commit()
}

// maxProvedTail bounds the tail read into memory to prove an append; a
// longer one is indexed afresh, streamed.
const maxProvedTail = 64 << 20

// provedAppend reports whether the committed bytes are the indexed ones
// followed by more (store.ChainExtends over the tail alone).
func (x *Index) provedAppend(r *store.NodesReader, m store.Meta, old indexed, committed int64) bool {
	if old.state == "" || committed-old.bytes > maxProvedTail {
		return false
	}
	tail := make([]byte, committed-old.bytes)
	if _, err := r.ReadAt(tail, old.bytes); err != nil && !errors.Is(err, io.EOF) {
		return false
	}
	return store.ChainExtends(m, old.state, tail, r.Stat()) == ""
}

// indexLines adds every node line of r to the index, numbering lines from
// line+1; it returns the nodes added and the last line number.
func indexLines(ctx context.Context, tx *sql.Tx, session int64, r io.Reader, line int64) (int, int64, error) {
	ins, err := tx.Prepare(`INSERT INTO nodes(session, node_id, role, created_at, line) VALUES (?,?,?,?,?)`)
	if err != nil {
		return 0, line, err
	}
	defer ins.Close()
	fts, err := tx.Prepare(`INSERT INTO fts(rowid, text) VALUES (?,?)`)
	if err != nil {
		return 0, line, err
	}
	defer fts.Close()
	br := bufio.NewReaderSize(r, 1<<20)
	n := 0
	for {
		raw, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(raw)) > 0 {
			line++
			if cerr := ctx.Err(); cerr != nil {
				return n, line, cerr
			}
			var node transcript.Node
			if jerr := node.UnmarshalJSON(raw); jerr != nil {
				return n, line, fmt.Errorf("nodes.jsonl:%d: %w", line, jerr)
			}
			res, ierr := ins.Exec(session, node.ID, string(node.Role), node.CreatedAt, line)
			if ierr != nil {
				return n, line, ierr
			}
			id, _ := res.LastInsertId()
			if _, ierr := fts.Exec(id, render.SearchText(&node)); ierr != nil {
				return n, line, ierr
			}
			n++
		}
		if errors.Is(err, io.EOF) {
			return n, line, nil
		}
		if err != nil {
			return n, line, err
		}
	}
}
