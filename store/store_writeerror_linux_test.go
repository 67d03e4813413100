//go:build linux

package store_test

import (
	"errors"
	"fmt"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// TestWriteFailureIsAWriteError: a write the disk refuses (here the file
// size limit, as a full disk would) is a *WriteError — its own exit code —
// not a *ParseError (bad input), and the session still opens with what it
// had. The write runs in a helper process: the limit is per process, and
// the test binary's own log must not hit it.
func TestWriteFailureIsAWriteError(t *testing.T) {
	dir := newSession(t)
	mustAppend(t, dir, store.AppendOptions{}, user("u1", "", "hello"))
	out, err := helperCmd(t, "fsize", dir).Output()
	if err != nil {
		t.Fatalf("helper: %v: %s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "write error" {
		t.Fatalf("append past the size limit: %s, want a *transcript.WriteError and no *ParseError", got)
	}
	if got := ids(mustOpen(t, dir)); len(got) != 1 || got[0] != "u1" {
		t.Fatalf("after the failed write the session holds %v, want [u1]", got)
	}
}

// appendPastSizeLimit lowers this process's file size limit below an
// append and says what the append returned.
func appendPastSizeLimit(dir string) string {
	signal.Ignore(syscall.SIGXFSZ)
	lim := syscall.Rlimit{Cur: 4096, Max: 1 << 62}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err == nil {
		lim.Max = old.Max
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		return "setrlimit: " + err.Error()
	}
	_, err := tryAppend(dir, store.AppendOptions{}, user("u2", "u1", strings.Repeat("x", 8192)))
	var we *store.WriteError
	var pe *transcript.ParseError
	switch {
	case errors.As(err, &pe):
		return fmt.Sprintf("parse error: %v", err)
	case errors.As(err, &we):
		return "write error"
	}
	return fmt.Sprintf("%T: %v", err, err)
}
