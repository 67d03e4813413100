package transcript

import (
	"os"
	"path/filepath"
)

// SnapshotFile is the index snapshot inside a session's cache/ folder
// (docs/FORMAT.md §1, "The index snapshot"): safe to delete.
const SnapshotFile = "cache/index.snap"

func snapshotPath(dir string) string { return filepath.Join(dir, SnapshotFile) }

// dropSnapshot removes the index snapshot; a missing one is fine.
func dropSnapshot(dir string) { _ = os.Remove(snapshotPath(dir)) }

// snapshotCovers reports whether dir's snapshot covers at most cut bytes,
// so a rewind to cut keeps it usable.
func snapshotCovers(dir string, cut int64) bool {
	h, err := readSnapHeader(snapshotPath(dir))
	return err == nil && h.covered <= cut
}

// snapHeader is what snapshotCovers needs of a snapshot (snapshot.go
// reads the rest).
type snapHeader struct{ covered int64 }

// readSnapHeader is replaced by the snapshot reader.
func readSnapHeader(string) (snapHeader, error) { return snapHeader{}, os.ErrNotExist }
