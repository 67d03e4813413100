//go:build unix

package osfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"syscall"
)

// NoFollow is the open flag that makes an open fail with ELOOP when the
// last path component is a symlink, for callers that hand the flags to
// another library (the session lock). Call RefuseSymlink first as well:
// on systems without the flag it is the only check.
const NoFollow = syscall.O_NOFOLLOW

// OpenNoFollow is os.OpenFile(path, flag|O_NOFOLLOW, perm): a symlink as
// the last path component fails with ELOOP (errors.Is(err,
// syscall.ELOOP)) instead of being followed.
func OpenNoFollow(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag|syscall.O_NOFOLLOW, perm)
}

// OpenDirNoFollow opens the directory path for reading (to lock it),
// failing on a symlink or anything but a directory.
func OpenDirNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
}

// RefuseSymlink is nothing here: O_NOFOLLOW refuses the symlink at open.
func RefuseSymlink(string) error { return nil }

// TryLock takes kind on f without waiting (flock with LOCK_NB). The lock
// belongs to the open file and ends when it is closed; taking the other
// kind converts it, releasing first. IsLockBusy tells a lock another
// process holds from a failure.
func TryLock(f *os.File, kind LockKind) error {
	how := syscall.LOCK_EX
	if kind == Shared {
		how = syscall.LOCK_SH
	}
	return syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
}

// IsLockBusy reports whether a TryLock error means "held by another, try
// again" (or a signal interrupted it) rather than a failure.
func IsLockBusy(err error) bool {
	return errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EINTR)
}

// ProcessGone reports whether pid names no running process: none at all,
// or a zombie, a process that was killed and not yet reaped by its
// parent. A zombie still answers kill(pid, 0), but it holds no lock and
// will write nothing more.
func ProcessGone(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	// /proc/PID/stat: "pid (comm) S …"; comm may hold spaces and
	// parentheses, so the state is the field after the last ')'.
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return false
	}
	fields := bytes.Fields(data[i+1:])
	return len(fields) > 0 && (fields[0][0] == 'Z' || fields[0][0] == 'X')
}

func identityOf(info os.FileInfo) (FileID, bool) {
	sys, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return FileID{}, false
	}
	return FileID{Dev: uint64(sys.Dev), Ino: sys.Ino}, true //nolint:unconvert // Dev's type differs by platform
}

func ownerOf(info os.FileInfo) (int, bool) {
	sys, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(sys.Uid), true
}
