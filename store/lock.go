package store

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gofrs/flock"

	"github.com/ctxfold/ctxfold/osfile"
	"github.com/ctxfold/ctxfold/transcript"
)

// DefaultLockTimeout is how long a writer waits for another one.
const DefaultLockTimeout = 10 * time.Second

// sessionLock is the exclusive writer lock of a session directory: an
// advisory flock on DIR/lock, which the kernel releases when its holder
// dies. The file's content names the holder for error messages only.
type sessionLock struct {
	fl   *flock.Flock
	path string
}

func acquireLock(ctx context.Context, dir string, timeout time.Duration, command string, now func() time.Time) (*sessionLock, error) {
	if timeout <= 0 {
		timeout = DefaultLockTimeout
	}
	path := filepath.Join(dir, LockFile)
	fl := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDWR|osfile.NoFollow|syscall.O_NONBLOCK))
	ok, err := false, osfile.RefuseSymlink(path)
	if err == nil {
		ok, err = fl.TryLock()
	}
	if err == nil && !ok {
		ok, err = waitLock(ctx, fl, timeout)
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
	}
	if err != nil {
		return nil, &transcript.ParseError{File: path, Msg: "cannot lock: " + err.Error()}
	}
	if !ok {
		le := &LockedError{Dir: dir, LockFile: path, Holder: readHolder(path)}
		if le.Holder != nil {
			le.Stale = holderIsDead(le.Holder)
		}
		return nil, le
	}
	host, _ := os.Hostname()
	holder := LockHolder{PID: os.Getpid(), Host: host, Since: now().UTC(), Command: command}
	data, _ := json.Marshal(holder)
	// The holder record is advisory: failing to write it must not fail the
	// write that holds the lock.
	if f, err := openForWrite(path, os.O_WRONLY|os.O_TRUNC, 0o644); err == nil {
		_, _ = f.Write(append(data, '\n'))
		f.Close()
	}
	return &sessionLock{fl: fl, path: path}, nil
}

func (l *sessionLock) release() {
	if f, err := openForWrite(l.path, os.O_WRONLY|os.O_TRUNC, 0o644); err == nil {
		f.Close()
	}
	_ = l.fl.Unlock()
}

func readHolder(path string) *LockHolder {
	data, err := readRegular(path)
	if err != nil || len(strings.TrimSpace(string(data))) == 0 {
		return nil
	}
	var h LockHolder
	if json.Unmarshal(data, &h) != nil || h.PID == 0 {
		return nil
	}
	return &h
}

// holderIsDead reports whether the holder is a process of this host that
// no longer exists. A holder on another host is never called dead.
func holderIsDead(h *LockHolder) bool {
	host, _ := os.Hostname()
	if h.Host != host {
		return false
	}
	return processGone(h.PID)
}

// processGone reports whether pid names no running process (none, or a
// zombie: a killed writer not yet reaped holds no lock and will write
// nothing more, so its leftover tail is an interrupted write).
func processGone(pid int) bool { return osfile.ProcessGone(pid) }

// writerActive reports whether the lock record names a live process: a
// write is in progress. It takes no lock, so readers never delay writers.
func writerActive(dir string) bool {
	h := readHolder(filepath.Join(dir, LockFile))
	return h != nil && !holderIsDead(h)
}

// waitLock blocks in flock(2) until the lock is free, the timeout passes or
// ctx ends. A blocked waiter is woken as soon as the holder lets go, so two
// writers in a loop take turns instead of one starving the other between
// polls. On giving up, the blocked call is left to finish in the
// background and releases the lock the moment it gets it.
func waitLock(ctx context.Context, fl *flock.Flock, timeout time.Duration) (bool, error) {
	done := make(chan error, 1)
	go func() { done <- fl.Lock() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case err := <-done:
		return err == nil, err
	case <-timer.C:
	case <-ctx.Done():
	}
	go func() {
		<-done
		_ = fl.Close()
	}()
	return false, nil
}
