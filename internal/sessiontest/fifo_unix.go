//go:build unix

package sessiontest

import (
	"syscall"
	"testing"
)

// MakeFIFO makes a named pipe at path (the hostile-input tests put one
// where a regular file belongs). Where the system has none the test is
// skipped.
func MakeFIFO(t testing.TB, path string, perm uint32) error {
	t.Helper()
	return syscall.Mkfifo(path, perm)
}
