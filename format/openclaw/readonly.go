package openclaw

import (
	"context"
	"database/sql"

	"github.com/ctxfold/ctxfold/format/input"
)

// openReadOnly opens OpenClaw's WAL-mode database at file for reading only
// (input.OpenSQLite: mode=ro, through a copy when its folder cannot hold
// the -shm) and returns it with what closes it (and removes a copy); a
// database without the transcript_events table is errNoTable.
func openReadOnly(ctx context.Context, file string) (*sql.DB, func(), error) {
	return input.OpenSQLite(ctx, file, func(db *sql.DB) error {
		var n int
		err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'transcript_events'`).Scan(&n)
		if err == nil && n == 0 {
			err = errNoTable
		}
		return err
	})
}

type tableError struct{}

func (tableError) Error() string { return "no transcript_events table" }

var errNoTable error = tableError{}
