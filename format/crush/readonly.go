package crush

import (
	"context"
	"database/sql"

	"github.com/ctxfold/ctxfold/format/input"
)

// openReadOnly opens Crush's WAL-mode database at file for reading only
// (input.OpenSQLite: mode=ro, through a copy when its folder cannot hold
// the -shm); cleanup closes it and removes a copy. Crush is never locked
// out (docs/FORMAT.md §8).
func openReadOnly(ctx context.Context, file string) (*sql.DB, func(), error) {
	return input.OpenSQLite(ctx, file, nil)
}
