package opencode

// Which sessions of a store an import reads (import --session, and the
// most recently active one for the read-only commands), and whether a
// file is a SQLite database holding OpenCode's tables.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/ctxfold/ctxfold/format/input"
)

// choose narrows a store's sessions (in creation order) to what opts
// asks: the one named by SessionID, the Nth (Session), the most recently
// active (Latest), or all of them.
func choose(all []sessionInfo, opts Options) ([]sessionInfo, error) {
	switch {
	case opts.SessionID != "":
		for _, s := range all {
			if s.id == opts.SessionID {
				return []sessionInfo{s}, nil
			}
		}
		return nil, input.Errorf(all[0].file, 0, "no session %q here; it holds %s", opts.SessionID, idList(all))
	case opts.Session > 0:
		if opts.Session > len(all) {
			return nil, input.Errorf(all[0].file, 0, "--session %d: it holds %d session(s)", opts.Session, len(all))
		}
		return all[opts.Session-1 : opts.Session], nil
	case opts.Latest && len(all) > 1:
		best := 0
		for i, s := range all {
			// Ties go to the later created: the newer conversation.
			if s.updated >= all[best].updated {
				best = i
			}
		}
		return all[best : best+1], nil
	}
	return all, nil
}

// idList names a store's sessions for an error, the newest last, at most
// the last five.
func idList(all []sessionInfo) string {
	var ids []string
	from := max(0, len(all)-5)
	for _, s := range all[from:] {
		ids = append(ids, s.id)
	}
	more := ""
	if from > 0 {
		more = fmt.Sprintf(" and %d older", from)
	}
	return fmt.Sprintf("%d: %s%s", len(all), strings.Join(ids, ", "), more)
}

// isSQLite reports whether path is a regular file starting with SQLite's
// magic (read without blocking: a FIFO is never opened for reading).
func isSQLite(path string) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return false
	}
	head := make([]byte, len(sqliteMagic))
	n, _ := f.Read(head)
	return bytes.Equal(head[:n], sqliteMagic)
}

// isDatabase reports whether path is a SQLite database with OpenCode's
// session, message and part tables (opened read-only, as Import opens it).
func isDatabase(path string) bool {
	if !isSQLite(path) {
		return false
	}
	d := &database{path: path}
	defer d.close()
	return d.open(context.Background()) == nil && d.cols["session"]["id"]
}
