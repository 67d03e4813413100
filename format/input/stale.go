package input

// Temporaries an import leaves when it is killed (docs/FORMAT.md §7,
// "Temporary files"): the spooled or decompressed copies of its inputs
// (.ctxfold-input-*) and the directory a new session is written in before
// it is renamed into place (.OUT.import-*). A running import holds an
// exclusive flock on each of its temporaries; the next import beside them
// removes the ones of ours (by name, a regular file or a real directory)
// that no process holds and that are older than StaleAfter — a killed
// import's, never a running one's, never the user's.

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ctxfold/ctxfold/osfile"
)

// StaleAfter is how old an unlocked temporary must be to be removed: a
// new one is locked right after it is made, so only that instant is
// unlocked.
const StaleAfter = time.Minute

// TempLock holds a temporary's flock until Release.
type TempLock struct{ f *os.File }

// LockTemp takes the exclusive flock of the temporary at path (a file or
// a directory) that this process just made.
func LockTemp(path string) *TempLock {
	f, err := osfile.OpenNoFollow(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return &TempLock{}
	}
	if osfile.TryLock(f, osfile.Exclusive) != nil {
		f.Close()
		return &TempLock{}
	}
	return &TempLock{f: f}
}

// Release lets the lock go (after the temporary is removed or renamed).
func (l *TempLock) Release() {
	if l != nil && l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

// RemoveStale removes the temporaries named prefix* in dir that a killed
// import left (see above) and says how many it removed. Errors are
// ignored: a temporary it cannot remove is left for the next run.
func RemoveStale(dir, prefix string) int {
	if dir == "" {
		dir = os.TempDir()
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	removed := 0
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) || e.Type()&^os.ModeDir != 0 {
			continue // not ours, or a symlink, FIFO, device
		}
		info, err := e.Info()
		if err != nil || time.Since(info.ModTime()) < StaleAfter || !ownedByMe(info) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		l := LockTemp(path)
		if l.f == nil {
			continue // a running import holds it
		}
		if os.RemoveAll(path) == nil {
			removed++
		}
		l.Release()
	}
	return removed
}

func ownedByMe(info os.FileInfo) bool {
	uid, ok := osfile.OwnerOf(info)
	return !ok || uid == os.Getuid()
}
