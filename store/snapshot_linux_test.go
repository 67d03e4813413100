package store

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The stat fingerprint relies on nanosecond ctimes: two writes in the
// same millisecond must still leave different ctimes (multigrain
// timestamps on this kernel's ext4 and tmpfs).
func TestCtimeChangesWithinAMillisecond(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	os.WriteFile(path, []byte("a"), 0o644)
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	defer f.Close()
	same := 0
	for range 200 {
		st1, _ := os.Stat(path)
		f.Write([]byte("b"))
		st2, _ := os.Stat(path)
		a, b := st1.Sys().(*syscall.Stat_t).Ctim.Nano(), st2.Sys().(*syscall.Stat_t).Ctim.Nano()
		if b-a < int64(time.Millisecond) && a == b {
			same++
		}
	}
	if same > 0 {
		t.Fatalf("%d of 200 writes left the ctime as it was: the stat fingerprint would miss them", same)
	}
}
