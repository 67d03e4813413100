package osfile_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ctxfold/ctxfold/osfile"
)

func TestOpenNoFollowRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	if f, err := osfile.OpenNoFollow(link, os.O_WRONLY|os.O_APPEND, 0); !errors.Is(err, syscall.ELOOP) {
		if f != nil {
			f.Close()
		}
		t.Fatalf("open through a symlink: got %v, want ELOOP", err)
	}
	if err := osfile.RefuseSymlink(link); err != nil && !errors.Is(err, syscall.ELOOP) {
		t.Fatalf("RefuseSymlink: %v", err)
	}
	f, err := osfile.OpenNoFollow(target, os.O_RDONLY, 0)
	if err != nil {
		t.Fatalf("a regular file: %v", err)
	}
	f.Close()
	if f, err := osfile.OpenDirNoFollow(target); err == nil {
		f.Close()
		t.Fatal("OpenDirNoFollow opened a regular file")
	}
	if err := os.Symlink(dir, filepath.Join(dir, "dirlink")); err != nil {
		t.Fatal(err)
	}
	if f, err := osfile.OpenDirNoFollow(filepath.Join(dir, "dirlink")); err == nil {
		f.Close()
		t.Fatal("OpenDirNoFollow followed a symlink")
	}
}

// Two opens of one file are two lock holders, as two processes are.
func TestTryLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	if err := os.WriteFile(path, []byte("content"), 0o644); err != nil {
		t.Fatal(err)
	}
	open := func() *os.File {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := open(), open()
	if err := osfile.TryLock(a, osfile.Exclusive); err != nil {
		t.Fatal(err)
	}
	if err := osfile.TryLock(b, osfile.Shared); !osfile.IsLockBusy(err) {
		t.Fatalf("shared under an exclusive lock: got %v, want busy", err)
	}
	// The lock does not keep the content from other readers.
	if data, err := os.ReadFile(path); err != nil || string(data) != "content" {
		t.Fatalf("read under the lock: %q, %v", data, err)
	}
	if err := osfile.TryLock(a, osfile.Shared); err != nil {
		t.Fatalf("converting to shared: %v", err)
	}
	if err := osfile.TryLock(b, osfile.Shared); err != nil {
		t.Fatalf("two shared locks: %v", err)
	}
	if err := osfile.TryLock(a, osfile.Exclusive); !osfile.IsLockBusy(err) {
		t.Fatalf("exclusive beside a shared lock: got %v, want busy", err)
	}
	b.Close()
	if err := osfile.TryLock(a, osfile.Exclusive); err != nil {
		t.Fatalf("closing releases the lock: %v", err)
	}
}

func TestProcessGone(t *testing.T) {
	if osfile.ProcessGone(os.Getpid()) {
		t.Fatal("this process is called gone")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if !osfile.ProcessGone(cmd.Process.Pid) {
		t.Fatalf("exited process %d is called running", cmd.Process.Pid)
	}
}

func TestIdentityOf(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("same"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stA, _ := os.Stat(a)
	stB, _ := os.Stat(b)
	idA, ok := osfile.IdentityOf(stA)
	if !ok {
		t.Skip("no file identity on this system")
	}
	idB, _ := osfile.IdentityOf(stB)
	if idA == idB {
		t.Fatalf("two files, one identity %+v", idA)
	}
	if err := os.Rename(b, a); err != nil {
		t.Fatal(err)
	}
	stA2, _ := os.Stat(a)
	if id, _ := osfile.IdentityOf(stA2); id != idB {
		t.Fatalf("after a rename the path is the renamed file: got %+v, want %+v", id, idB)
	}
	if uid, ok := osfile.OwnerOf(stA2); ok && uid != os.Getuid() {
		t.Fatalf("owner %d, want %d", uid, os.Getuid())
	}
}
