//go:build windows

package osfile

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// NoFollow is 0: Windows has no open flag that refuses a symlink. Callers
// that pass it to another library call RefuseSymlink first.
const NoFollow = 0

// OpenNoFollow opens path like os.OpenFile, refusing a symlink (or any
// other reparse point Go reports as irregular, such as a junction) as the
// last path component with ELOOP, as O_NOFOLLOW does on Unix.
//
// This is weaker than O_NOFOLLOW: the check (Lstat) and the open are two
// steps, so a symlink put in place between them is followed. ctxfold's
// session lock and the re-checks after every write bound what that race
// can do, but it is not the atomic refusal Unix gives.
func OpenNoFollow(path string, flag int, perm os.FileMode) (*os.File, error) {
	if err := RefuseSymlink(path); err != nil {
		return nil, err
	}
	return os.OpenFile(path, flag, perm)
}

// OpenDirNoFollow opens the directory path for reading (to lock it),
// failing on a symlink or anything but a directory. The symlink check is
// as weak as OpenNoFollow's.
func OpenDirNoFollow(path string) (*os.File, error) {
	if err := RefuseSymlink(path); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.IsDir() {
		f.Close()
		if err == nil {
			err = &os.PathError{Op: "open", Path: path, Err: syscall.ENOTDIR}
		}
		return nil, err
	}
	return f, nil
}

// RefuseSymlink fails with ELOOP when path is a symlink or another
// reparse point; a missing path is no error (the open that follows may
// create it).
func RefuseSymlink(path string) error {
	st, err := os.Lstat(path)
	if err != nil {
		return nil //nolint:nilerr // the open that follows reports it
	}
	if st.Mode()&(os.ModeSymlink|os.ModeIrregular) != 0 {
		return &os.PathError{Op: "open", Path: path, Err: syscall.ELOOP}
	}
	return nil
}

// lockOffset is where the one locked byte lies. Windows byte-range locks
// are mandatory (a read through another handle of a locked range fails),
// so the lock covers a byte no file ever reaches, not the content.
const (
	lockOffsetLow  = 0xFFFFFFFF
	lockOffsetHigh = 0x7FFFFFFF
)

// TryLock takes kind on f without waiting (LockFileEx with
// LOCKFILE_FAIL_IMMEDIATELY). Like flock, taking a lock converts the one
// f holds by releasing it first; the lock ends when f is closed.
func TryLock(f *os.File, kind LockKind) error {
	h := windows.Handle(f.Fd())
	// No lock held is the usual case here, and not an error.
	_ = windows.UnlockFileEx(h, 0, 1, 0, &windows.Overlapped{Offset: lockOffsetLow, OffsetHigh: lockOffsetHigh})
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if kind == Exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	return windows.LockFileEx(h, flags, 0, 1, 0, &windows.Overlapped{Offset: lockOffsetLow, OffsetHigh: lockOffsetHigh})
}

// IsLockBusy reports whether a TryLock error means "held by another, try
// again" rather than a failure.
func IsLockBusy(err error) bool {
	return errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING)
}

// stillActive is the exit code GetExitCodeProcess reports for a process
// that has not exited (STILL_ACTIVE).
const stillActive = 259

// ProcessGone reports whether pid names no running process: OpenProcess
// finds none, or the process has an exit code. A process this user may
// not query is called running, as is anything that cannot be asked.
func ProcessGone(pid int) bool {
	if pid <= 0 {
		return false
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return errors.Is(err, windows.ERROR_INVALID_PARAMETER)
	}
	defer windows.CloseHandle(h)
	var code uint32
	if windows.GetExitCodeProcess(h, &code) != nil {
		return false
	}
	return code != stillActive
}

// identityOf reports none: os.FileInfo on Windows carries no file index
// without another system call, so callers re-check content instead.
func identityOf(os.FileInfo) (FileID, bool) { return FileID{}, false }

// ownerOf reports none: a Windows file's owner is a SID, not a number.
func ownerOf(os.FileInfo) (int, bool) { return 0, false }
