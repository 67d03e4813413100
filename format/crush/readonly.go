package crush

// Crush's database is in WAL mode. Opened with mode=ro, SQLite still needs
// the -shm file beside it, which it cannot create in a folder the user
// cannot write; immutable=1 would skip the -wal (the newest messages). So
// when the read-only open fails, the database and its -wal are copied to
// a temporary folder and the copy is read: the same rows, the original
// untouched, Crush never locked out (docs/FORMAT.md §8).

import (
	"context"
	"database/sql"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"syscall"

	_ "modernc.org/sqlite" // the driver behind database/sql's "sqlite"
)

// openReadOnly opens the database at file for reading only; cleanup closes
// it and removes a copy.
func openReadOnly(ctx context.Context, file string) (*sql.DB, func(), error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, nil, err
	}
	db, err := open(ctx, abs)
	if err == nil {
		return db, func() { db.Close() }, nil
	}
	dir, terr := os.MkdirTemp("", "ctxfold-crush-*")
	if terr != nil {
		return nil, nil, err
	}
	drop := func() { os.RemoveAll(dir) }
	dst := filepath.Join(dir, "crush.db")
	for _, suffix := range []string{"", "-wal"} {
		if cerr := copyRegular(abs+suffix, dst+suffix); cerr != nil && (suffix == "" || !os.IsNotExist(cerr)) {
			drop()
			return nil, nil, cerr
		}
	}
	db, err = open(ctx, dst)
	if err != nil {
		drop()
		return nil, nil, err
	}
	return db, func() { db.Close(); drop() }, nil
}

// open opens path with mode=ro (never written, never created) and
// query_only, and checks it can be read.
func open(ctx context.Context, path string) (*sql.DB, error) {
	u := url.URL{Scheme: "file", Path: path, RawQuery: "mode=ro&_pragma=query_only(1)"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master`).Scan(&n); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// copyRegular copies the regular file src to dst (never a FIFO or a
// device).
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
