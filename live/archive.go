package live

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// dropSession removes the cache session before a fresh import (keep:
// moves it to a new version, Options.Archive). The state goes too: a
// crash after this leaves no state that vouches for a half-replaced
// session.
func dropSession(e *Entry, dir string, keep bool) error {
	if keep {
		if err := keepVersion(e.Session, dir); err != nil {
			return fmt.Errorf("archive: %w", err)
		}
	} else if err := os.RemoveAll(e.Session); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	_ = os.Remove(filepath.Join(dir, "state.json"))
	return nil
}

// VersionsDir is where an archive entry keeps the sessions fresh imports
// replaced (versions/1, versions/2, … oldest first).
func VersionsDir(entry string) string { return filepath.Join(entry, "versions") }

// keepVersion moves session (if any) to the next free versions/N: one
// rename, so a crash leaves it either in place or kept.
func keepVersion(session, dir string) error {
	if _, err := os.Lstat(session); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	vd := VersionsDir(dir)
	if err := os.MkdirAll(vd, 0o700); err != nil {
		return err
	}
	for n := 1; ; n++ {
		to := filepath.Join(vd, fmt.Sprint(n))
		if _, err := os.Lstat(to); err == nil {
			continue
		}
		return os.Rename(session, to)
	}
}
