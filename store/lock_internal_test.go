package store

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// Issue 18 item 8: a writer killed but not yet reaped (a zombie) still
// answers kill(pid, 0); it must count as gone, or its interrupted write
// is never reported and the lock error calls it running.
func TestZombieHolderIsDead(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start a child: %v", err)
	}
	defer cmd.Wait()
	pid := cmd.Process.Pid
	host, _ := os.Hostname()
	h := &LockHolder{PID: pid, Host: host}
	// Not reaped: the child becomes a zombie once it exits.
	deadline := time.Now().Add(10 * time.Second)
	for !holderIsDead(h) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d (exited, not reaped) still counts as a live holder", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if holderIsDead(&LockHolder{PID: os.Getpid(), Host: host}) {
		t.Fatal("the running test process counts as dead")
	}
}
