package openclaw

// OpenClaw's database is in WAL mode: a read-only connection still needs
// the -shm beside it, which a folder the user cannot write cannot hold;
// immutable=1 would skip the -wal (the newest events). So the database is
// opened mode=ro (never written, never created; query_only refuses any
// write), and when that cannot open, the database and its -wal are copied
// to a temporary folder and the copy is read (as format/opencode does).

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

// openReadOnly opens the database at file and returns it with what closes
// it (and removes a copy).
func openReadOnly(ctx context.Context, file string) (*sql.DB, func(), error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, nil, err
	}
	db, err := openAt(ctx, abs)
	if err == nil {
		return db, func() { db.Close() }, nil
	}
	if !cannotOpen(err) {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "ctxfold-openclaw-*")
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
	db, err = openAt(ctx, dst)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return db, func() { db.Close(); os.RemoveAll(dir) }, nil
}

func openAt(ctx context.Context, abs string) (*sql.DB, error) {
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
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'transcript_events'`).Scan(&n); err != nil {
		db.Close()
		return nil, err
	}
	if n == 0 {
		db.Close()
		return nil, errNoTable
	}
	return db, nil
}

type tableError struct{}

func (tableError) Error() string { return "no transcript_events table" }

var errNoTable error = tableError{}

// cannotOpen: SQLite's SQLITE_CANTOPEN (14) or SQLITE_READONLY_DIRECTORY
// (1544), what a missing -shm in a read-only folder gives.
func cannotOpen(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "unable to open database file") || strings.HasSuffix(msg, "(14)") || strings.HasSuffix(msg, "(1544)")
}

// copyRegular copies the regular file src to dst (never a FIFO or a device).
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
