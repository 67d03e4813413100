// Package interoptest holds what every client's oracle and live tests
// under interop/ share: ctxfold run in-process with a fixed clock and a
// private environment, and a readable first difference of two JSON
// values (docs/INTEROP.md).
package interoptest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/cmd"
	"github.com/ctxfold/ctxfold/report"
)

// Now is the clock every in-process run reads.
var Now = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// envs holds each test's environment: every run of one test sees the same
// private HOME, XDG_CONFIG_HOME and XDG_CACHE_HOME (a live cache an
// earlier run filled is found again), and nothing of the machine's.
var envs sync.Map // testing.TB → map[string]string

func env(t testing.TB) map[string]string {
	if e, ok := envs.Load(t); ok {
		return e.(map[string]string)
	}
	e := map[string]string{"HOME": t.TempDir(), "XDG_CONFIG_HOME": t.TempDir(), "XDG_CACHE_HOME": t.TempDir()}
	envs.Store(t, e)
	t.Cleanup(func() { envs.Delete(t) })
	return e
}

// Home and ConfigHome are the test's private HOME and XDG_CONFIG_HOME,
// where a test writes a client's configuration the way the client's
// record.sh did (a custom model's window, transcript.WindowReporter).
func Home(t testing.TB) string       { return env(t)["HOME"] }
func ConfigHome(t testing.TB) string { return env(t)["XDG_CONFIG_HOME"] }

// Ctxfold runs ctxfold with args in-process and returns its stdout,
// stderr and exit code.
func Ctxfold(t testing.TB, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ios, _, out, errOut := report.Test()
	e := env(t)
	f := &cmd.Factory{IO: ios, Now: func() time.Time { return Now }, Getenv: func(k string) string { return e[k] }}
	code = cmd.Run(context.Background(), f, args)
	return out.String(), errOut.String(), code
}

// Must is Ctxfold that fails the test unless the run exits 0, and returns
// its stdout.
func Must(t testing.TB, args ...string) string {
	t.Helper()
	out, errOut, code := Ctxfold(t, args...)
	if code != 0 {
		t.Fatalf("ctxfold %s: exit %d\n%s", strings.Join(args, " "), code, errOut)
	}
	return out
}

// Diff shows where the JSON of got (what render built) first differs from
// want (what the client sent).
func Diff(got, want any) string {
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	i := 0
	for i < len(g) && i < len(w) && g[i] == w[i] {
		i++
	}
	from := max(0, i-80)
	cut := func(b []byte) string { return string(b[from:min(len(b), i+160)]) }
	return fmt.Sprintf("at byte %d\nrender: …%s…\nsent:   …%s…", i, cut(g), cut(w))
}

// Rerecord runs the client's record.sh (in the test's package folder) into
// a new folder and returns it: the live tests' first step. It skips the
// test unless CTXFOLD_INTEROP_LIVE=1 (the real client is needed), and
// gives the recording timeout; env adds variables (CLIENT=kilo, …).
func Rerecord(t testing.TB, client string, timeout time.Duration, env ...string) string {
	t.Helper()
	if os.Getenv("CTXFOLD_INTEROP_LIVE") != "1" {
		t.Skip("set CTXFOLD_INTEROP_LIVE=1 to re-record with the real " + client)
	}
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	rec := exec.CommandContext(ctx, "bash", "record.sh")
	rec.Env = append(append(os.Environ(), "OUT="+out), env...)
	if b, err := rec.CombinedOutput(); err != nil {
		t.Fatalf("record.sh: %v\n%s", err, b)
	}
	t.Logf("record.sh took %s", time.Since(start).Round(time.Second))
	return out
}
