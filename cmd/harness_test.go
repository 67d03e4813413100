package cmd

import (
	"context"
	"testing"
	"time"

	"github.com/spf13/cobra"

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
	return runTreeEnv(t, e, NewRootCmd, args...)
}

// runTreeEnv is runEnv over the command tree newRoot builds.
func runTreeEnv(t *testing.T, e cliEnv, newRoot func(*Factory) *cobra.Command, args ...string) cliResult {
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
	code := runTree(context.Background(), f, args, newRoot)
	return cliResult{Stdout: out.String(), Stderr: errOut.String(), Code: code}
}

// flagsToOptions runs args through the whole command tree — config file,
// environment and persistent flags included — with the command under
// test built by newCmd around a runF seam, so nothing runs: it returns
// the options the command would run with (nil when the command line was
// refused first) and the run's result (STYLE 15: flags → options).
func flagsToOptions[T any](t *testing.T, env map[string]string, newCmd func(*Factory, func(*T) error) *cobra.Command, args ...string) (*T, cliResult) {
	t.Helper()
	var got *T
	newRoot := func(f *Factory) *cobra.Command {
		root := NewRootCmd(f)
		under := newCmd(f, func(o *T) error { got = o; return nil })
		for _, c := range root.Commands() {
			if c.Name() == under.Name() {
				root.RemoveCommand(c)
			}
		}
		root.AddCommand(under)
		if under.Name() == "config" {
			addConfigFlags(root, under) // as addHiddenCommands does
		}
		return root
	}
	r := runTreeEnv(t, cliEnv{Env: env}, newRoot, args...)
	return got, r
}

// cliRun is runEnv with an environment and a TTY setting only.
func cliRun(t *testing.T, env map[string]string, tty bool, args ...string) cliResult {
	t.Helper()
	return runEnv(t, cliEnv{TTY: tty, Env: env}, args...)
}
