package cmd

import (
	"context"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/report"
)

// The one in-process harness of the command tests: Run with fake streams,
// a fixed clock and an environment of the test's own (nothing else is
// visible; XDG_CONFIG_HOME is a fresh empty directory unless the test sets
// it).

// cliResult is one run: exact stdout, stderr and exit code.
type cliResult struct {
	Stdout, Stderr string
	Code           int
}

// cliEnv is what a run sees besides its arguments.
type cliEnv struct {
	TTY   bool
	Stdin string
	Env   map[string]string
}

var coreNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// runEnv runs ctxfold with args in e.
func runEnv(t *testing.T, e cliEnv, args ...string) cliResult {
	t.Helper()
	ios, in, out, errOut := report.Test()
	in.WriteString(e.Stdin)
	ios.StdoutTTY, ios.StderrTTY = e.TTY, e.TTY
	env := map[string]string{"XDG_CONFIG_HOME": t.TempDir()}
	for k, v := range e.Env {
		env[k] = v
	}
	ios.NoColorEnv = report.NoColorFromEnv(func(k string) string { return env[k] })
	f := &Factory{IO: ios, Now: func() time.Time { return coreNow }, Getenv: func(k string) string { return env[k] }}
	code := Run(context.Background(), f, args)
	return cliResult{Stdout: out.String(), Stderr: errOut.String(), Code: code}
}

// cliRun is runEnv with an environment and a TTY setting only.
func cliRun(t *testing.T, env map[string]string, tty bool, args ...string) cliResult {
	t.Helper()
	return runEnv(t, cliEnv{TTY: tty, Env: env}, args...)
}
