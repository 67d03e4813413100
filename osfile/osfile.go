// Package osfile owns the operating system's file primitives that ctxfold
// relies on and that differ between systems: opens that never follow a
// symlink, advisory file locks, whether a process is still running, and a
// file's identity (device and inode) and owner. Everything above it is
// portable Go; the Unix implementation is exactly the system calls
// ctxfold has always made, and the Windows one is the nearest equivalent
// (each says where it is weaker).
package osfile

import "os"

// LockKind says which advisory lock TryLock takes.
type LockKind int

const (
	// Exclusive is a writer's lock: no other holder of any kind.
	Exclusive LockKind = iota
	// Shared is a reader's lock: other shared holders, no exclusive one.
	Shared
)

// FileID is a file's identity: a file replaced by a rename has another.
type FileID struct {
	Dev uint64
	Ino uint64
}

// IdentityOf is the identity of the file behind info (from Stat or
// Lstat), or false where the system does not report one; callers then
// treat the file as possibly replaced and re-check its content.
func IdentityOf(info os.FileInfo) (FileID, bool) { return identityOf(info) }

// OwnerOf is the numeric user id that owns the file behind info, or false
// where the system has none.
func OwnerOf(info os.FileInfo) (int, bool) { return ownerOf(info) }
