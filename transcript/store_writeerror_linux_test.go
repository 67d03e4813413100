//go:build linux

package transcript_test

import (
	"errors"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	"github.com/ctxfold/ctxfold/transcript"
)

// TestWriteFailureIsAWriteError: a write the disk refuses (here the file
// size limit, as a full disk would) is a *WriteError — its own exit code —
// not a *ParseError (bad input), and the session still opens with what it
// had.
func TestWriteFailureIsAWriteError(t *testing.T) {
	dir := newSession(t)
	mustAppend(t, dir, transcript.AppendOptions{}, user("u1", "", "hello"))
	signal.Ignore(syscall.SIGXFSZ)
	defer signal.Reset(syscall.SIGXFSZ)
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skipf("skipping: no file size limit to set here: %v", err)
	}
	limited := old
	limited.Cur = 4096
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limited); err != nil {
		t.Skipf("skipping: cannot lower the file size limit: %v", err)
	}
	_, err := tryAppend(dir, transcript.AppendOptions{}, user("u2", "u1", strings.Repeat("x", 8192)))
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	var we *transcript.WriteError
	if !errors.As(err, &we) {
		t.Fatalf("append past the size limit: %T %v, want *transcript.WriteError", err, err)
	}
	var pe *transcript.ParseError
	if errors.As(err, &pe) {
		t.Fatalf("a write failure is also a ParseError: %v", err)
	}
	if got := ids(mustOpen(t, dir)); len(got) != 1 || got[0] != "u1" {
		t.Fatalf("after the failed write the session holds %v, want [u1]", got)
	}
}
