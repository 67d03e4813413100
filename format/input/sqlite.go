package input

// A client's SQLite store (OpenCode's and Kilo's opencode.db, Crush's
// crush.db, OpenClaw's openclaw-agent.sqlite) is read while the client may
// be writing it, and never written: opened mode=ro (never written, never
// created) with query_only, so no statement can change it and the client
// is never locked out (docs/FORMAT.md §8). These stores are in WAL mode:
// even a read-only connection needs the -shm file beside the database,
// which SQLite cannot create in a folder the user cannot write ("unable to
// open database file (14)"). immutable=1 would skip what the -wal holds
// (the newest messages), so then the database and its -wal are copied to a
// temporary folder and the copy is read: the same rows, the original
// untouched.

import (
	"context"
	"database/sql"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	_ "modernc.org/sqlite" // pure Go (no cgo): database/sql's "sqlite"
)

// OpenSQLite opens the store at file for reading only, through a copy when
// its folder cannot hold SQLite's -shm, and returns it with what closes it
// (and removes the copy). check, when set, runs on the open connection
// (a query of the tables the format needs); its error is returned as is.
func OpenSQLite(ctx context.Context, file string, check func(*sql.DB) error) (*sql.DB, func(), error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, nil, err
	}
	db, err := openSQLiteAt(ctx, abs, check)
	if err == nil {
		return db, func() { db.Close() }, nil
	}
	if !cannotOpenSQLite(err) {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "ctxfold-sqlite-*")
	if err != nil {
		return nil, nil, err
	}
	dst := filepath.Join(dir, filepath.Base(abs))
	for _, suffix := range []string{"", "-wal"} {
		if err := copyRegular(abs+suffix, dst+suffix); err != nil && (suffix == "" || !os.IsNotExist(err)) {
			os.RemoveAll(dir)
			return nil, nil, err
		}
	}
	db, err = openSQLiteAt(ctx, dst, check)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return db, func() { db.Close(); os.RemoveAll(dir) }, nil
}

// openSQLiteAt opens the regular file abs mode=ro with query_only and
// reads its schema (SQLite opens lazily: a file that is not a database, or
// a folder without its -shm, fails here, not at the first query).
func openSQLiteAt(ctx context.Context, abs string, check func(*sql.DB) error) (*sql.DB, error) {
	if st, err := os.Stat(abs); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, &os.PathError{Op: "open", Path: abs, Err: syscall.EINVAL}
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: "mode=ro&_pragma=query_only(1)"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master`).Scan(&n); err != nil {
		db.Close()
		return nil, err
	}
	if check != nil {
		if err := check(db); err != nil {
			db.Close()
			return nil, err
		}
	}
	return db, nil
}

// cannotOpenSQLite: SQLite's SQLITE_CANTOPEN (14) or
// SQLITE_READONLY_DIRECTORY (1544), what a missing -shm in a read-only
// folder gives.
func cannotOpenSQLite(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "unable to open database file") || strings.HasSuffix(msg, "(14)") || strings.HasSuffix(msg, "(1544)")
}

// copyRegular copies the regular file src to dst (never a FIFO or a
// device: a -wal of another kind is refused).
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
