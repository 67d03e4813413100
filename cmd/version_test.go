package cmd

import (
	"context"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/report"
)

func TestVersionReadsVCSSettings(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-11-30T10:00:00Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	read := func() (*debug.BuildInfo, bool) { return bi, true }
	platform := runtime.GOOS + "/" + runtime.GOARCH

	ios, _, out, _ := report.Test()
	if err := runVersion(context.Background(), &versionOptions{IO: ios, BuildInfo: read}); err != nil {
		t.Fatal(err)
	}
	want := "ctxfold v1.2.3\ncommit abc123 (modified) 2026-11-30T10:00:00Z\ngo1.26.8 " + platform + "\n"
	if out.String() != want {
		t.Fatalf("text:\n%q\nwant\n%q", out.String(), want)
	}

	ios, _, out, _ = report.Test()
	if err := runVersion(context.Background(), &versionOptions{IO: ios, BuildInfo: read, JSON: true}); err != nil {
		t.Fatal(err)
	}
	wantJSON := `{"commit":"abc123","commit_time":"2026-11-30T10:00:00Z","go_version":"go1.26.8","modified":true,"platform":"` + platform + `","schema_version":2,"version":"v1.2.3"}` + "\n"
	if out.String() != wantJSON {
		t.Fatalf("json:\n%s\nwant\n%s", out.String(), wantJSON)
	}

	// No build info (or no VCS stamp): a devel version, no commit line.
	ios, _, out, _ = report.Test()
	runVersion(context.Background(), &versionOptions{IO: ios, BuildInfo: func() (*debug.BuildInfo, bool) { return nil, false }})
	if want := "ctxfold (devel)\n" + runtime.Version() + " " + platform + "\n"; out.String() != want {
		t.Fatalf("no build info:\n%q\nwant\n%q", out.String(), want)
	}
}

func TestVersionCommand(t *testing.T) {
	r := cliRun(t, nil, false, "version", "--json")
	if r.Code != 0 || decodeJSON(t, r.Stdout)["go_version"] != runtime.Version() {
		t.Fatalf("exit %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	if r := cliRun(t, nil, false, "version", "extra"); r.Code != ExitUsage {
		t.Fatalf("extra argument: exit %d", r.Code)
	}
}

// Issue 44 item 4: --version and -v print what `ctxfold version` prints.
func TestVersionFlags(t *testing.T) {
	want := cliRun(t, nil, false, "version")
	for _, flag := range []string{"--version", "-v"} {
		r := cliRun(t, nil, false, flag)
		if r.Code != 0 || r.Stdout != want.Stdout || r.Stdout == "" {
			t.Fatalf("%s: exit %d stdout %q stderr %q, want %q", flag, r.Code, r.Stdout, r.Stderr, want.Stdout)
		}
	}
	wantJSON := cliRun(t, nil, false, "version", "--json")
	if r := cliRun(t, nil, false, "--version", "--json"); r.Stdout != wantJSON.Stdout {
		t.Fatalf("--version --json: %q, want %q", r.Stdout, wantJSON.Stdout)
	}
	// Without the flag the bare command still shows help, and an unknown
	// command stays an error.
	if r := cliRun(t, nil, false); r.Code != 0 || !strings.Contains(r.Stdout, "Usage:") {
		t.Fatalf("bare: exit %d %q", r.Code, r.Stdout)
	}
	if r := cliRun(t, nil, false, "nosuchcmd"); r.Code != ExitUsage {
		t.Fatalf("unknown command: exit %d %q", r.Code, r.Stderr)
	}
}
