package cmd

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/report"
)

// cliResult is one run of the command line through Run with fake streams.
type cliResult struct {
	Stdout, Stderr string
	Code           int
}

// cliRun runs ctxfold with args, an environment (nothing else is visible:
// HOME and XDG_CONFIG_HOME point where the test says) and a TTY setting.
func cliRun(t *testing.T, env map[string]string, tty bool, args ...string) cliResult {
	t.Helper()
	ios, _, out, errOut := report.Test()
	ios.StdoutTTY, ios.StderrTTY = tty, tty
	if env == nil {
		env = map[string]string{}
	}
	if _, ok := env["XDG_CONFIG_HOME"]; !ok {
		env["XDG_CONFIG_HOME"] = t.TempDir()
	}
	f := &Factory{IO: ios, Now: func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) },
		Getenv: func(k string) string { return env[k] }}
	code := Run(context.Background(), f, args)
	return cliResult{Stdout: out.String(), Stderr: errOut.String(), Code: code}
}

func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, s)
	}
	return m
}
