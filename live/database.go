package live

import (
	"io"

	"github.com/ctxfold/ctxfold/format/input"
)

// entryKey is what a cache entry is keyed by: the file's absolute path,
// and the session picked from a store holding several (each its own
// entry).
func entryKey(abs, sessionID string) string {
	if sessionID == "" {
		return abs
	}
	return abs + "\x00session=" + sessionID
}

// isDatabase reports whether the file at abs is a SQLite store.
func isDatabase(abs string) bool {
	f, err := openInput(abs)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	return input.IsSQLite(head[:n])
}
