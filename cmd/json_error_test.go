package cmd

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 44 item 13: with --json every command's error is also one JSON
// object on stdout (error, hint, exit_code), the exit code unchanged; a
// command that printed its own object for the error (estimate's
// read_error) is not given a second one.
func TestJSONErrorsEverywhere(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	for _, args := range [][]string{
		{"render", missing}, {"graph", missing}, {"search", missing, "x"}, {"audit", missing},
		{"compact", missing}, {"checkout", missing, "n1"}, {"append", missing, "--role", "user", "--content", "x"},
		{"pin", missing, "n1"}, {"repair", missing}, {"export", missing, "--to", "codex"},
		{"import", missing, "-o", missing + "-out"}, {"models", "extra"}, {"config", "--color", "pink"},
		{"render", missing, "--no-such-flag"}, {"cache", "extra"}, {"version", "extra"},
	} {
		plain := cliRun(t, nil, false, args...)
		r := cliRun(t, nil, false, append(args, "--json")...)
		if r.Code == 0 || r.Code != plain.Code {
			t.Errorf("%v --json: exit %d, without --json %d", args, r.Code, plain.Code)
			continue
		}
		var obj struct {
			Error    string
			ExitCode int `json:"exit_code"`
			Schema   int `json:"schema_version"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &obj); err != nil || strings.Count(r.Stdout, "\n") != 1 {
			t.Errorf("%v --json: stdout %q is not one JSON object: %v", args, r.Stdout, err)
			continue
		}
		if obj.ExitCode != r.Code || obj.Error == "" || obj.Schema != 2 || !strings.Contains(r.Stderr, "ctxfold: error: "+obj.Error) {
			t.Errorf("%v --json: %+v, stderr %q", args, obj, r.Stderr)
		}
	}
	// estimate prints its own read_error object: only that one.
	r := cliRun(t, nil, false, "estimate", missing, "--json")
	if r.Code != ExitUsage || strings.Count(r.Stdout, "\n") != 1 || !strings.Contains(r.Stdout, `"read_error"`) {
		t.Errorf("estimate --json: %d %q", r.Code, r.Stdout)
	}
}
