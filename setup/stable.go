package setup

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctxfold/ctxfold/store"
)

// Ephemeral reports whether the binary at exe lives where npm keeps a
// package only for one `npx` run (its _npx cache, which npm empties at
// will): a client's settings must never name it, or the status line and
// hooks stop working when the cache goes (docs/INSTALL.md).
func Ephemeral(exe string) bool {
	return strings.Contains(filepath.ToSlash(exe), "/_npx/")
}

// StablePath is where setup keeps its own copy of an ephemeral binary:
// ~/.local/bin/ctxfold (ctxfold.exe on Windows), the folder of a user's
// own programs that most shells already have on PATH.
func StablePath(home string, windows bool) string {
	name := "ctxfold"
	if windows {
		name += ".exe"
	}
	return filepath.Join(home, ".local", "bin", name)
}

// InstallCopy copies the binary at exe to dest unless dest already holds
// the same bytes (then wrote is false): atomically, executable, never
// through a symlink or over anything but a regular file.
func InstallCopy(exe, dest string) (wrote bool, err error) {
	src, err := os.ReadFile(exe)
	if err != nil {
		return false, &FileError{exe, err}
	}
	if fi, err := os.Lstat(dest); err == nil {
		if !fi.Mode().IsRegular() {
			return false, &FileError{dest, errors.New("not a regular file (a link?): no copy of ctxfold written")}
		}
		if now, err := os.ReadFile(dest); err == nil && bytes.Equal(now, src) {
			return false, nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return false, &FileError{dest, err}
	}
	err = store.WriteFileAtomic(dest, store.AtomicOptions{Perm: 0o755, Sync: true}, func(w io.Writer) error {
		_, err := w.Write(src)
		return err
	})
	if err != nil {
		return false, &FileError{dest, err}
	}
	return true, nil
}
