package opencode

// A WAL-mode database (OpenCode's) in a folder the user cannot write:
// even a read-only connection needs the -shm file beside the database,
// and SQLite fails with "unable to open database file (14)" when it
// cannot create it. Opening with immutable=1 would skip what the -wal
// file holds (the newest messages), so instead the database and its -wal
// are copied to a temporary folder and the copy is read: the same rows,
// the original untouched (docs/FORMAT.md §8).

import (
	"context"
	"database/sql"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// queryTables opens the database at abs read-only (mode=ro: never
// written, never created; query_only refuses any write a statement might
// attempt) and starts the query of its tables.
func queryTables(ctx context.Context, abs string) (*sql.DB, *sql.Rows, error) {
	u := url.URL{Scheme: "file", Path: abs, RawQuery: "mode=ro&_pragma=query_only(1)"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, nil, err
	}
	db.SetMaxOpenConns(1)
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	return db, rows, err
}

// cannotOpen: SQLite's SQLITE_CANTOPEN (14) or SQLITE_READONLY_DIRECTORY
// (1544), what a missing -shm in a read-only folder gives.
func cannotOpen(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "unable to open database file") || strings.HasSuffix(msg, "(14)") || strings.HasSuffix(msg, "(1544)")
}

// openCopy copies the database at abs and its -wal into a new temporary
// folder and opens the copy; failed is the connection that failed.
func (d *database) openCopy(ctx context.Context, abs string, failed *sql.DB) (*sql.DB, *sql.Rows, error) {
	if failed != nil {
		failed.Close()
	}
	dir, err := os.MkdirTemp("", "ctxfold-opencode-*")
	if err != nil {
		return nil, nil, err
	}
	d.copyDir = dir
	dst := filepath.Join(dir, filepath.Base(abs))
	for _, suffix := range []string{"", "-wal"} {
		if err := copyRegular(abs+suffix, dst+suffix); err != nil && (suffix == "" || !os.IsNotExist(err)) {
			return nil, nil, err
		}
	}
	return queryTables(ctx, dst)
}

// copyRegular copies the regular file src to dst (never a FIFO or a
// device: an -wal of another kind is refused).
func copyRegular(src, dst string) error {
	in, err := os.OpenFile(src, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	if st, err := in.Stat(); err != nil || !st.Mode().IsRegular() {
		if err == nil {
			err = &os.PathError{Op: "copy", Path: src, Err: syscall.EINVAL}
		}
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
