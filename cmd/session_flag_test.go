package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A database holding several sessions reads as its most recently active
// one; --session names another, each through its own cache entry
// (docs/LIVE.md, "Databases").
func TestDatabaseArgumentSession(t *testing.T) {
	b, err := os.ReadFile("../format/opencode/testdata/opencode.db")
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "opencode.db")
	if err := os.WriteFile(db, b, 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": t.TempDir(), "XDG_CACHE_HOME": t.TempDir()}
	latest := cliRun(t, env, false, "render", db, "--format", "ids")
	if latest.Code != 0 {
		t.Fatalf("render DB: exit %d: %s", latest.Code, latest.Stderr)
	}
	// ses_01 (the parent, updated last) holds the compaction; ses_02 is
	// its sub-agent session.
	other := cliRun(t, env, false, "render", db, "--format", "ids", "--session", "ses_02")
	if other.Code != 0 {
		t.Fatalf("render DB --session ses_02: exit %d: %s", other.Code, other.Stderr)
	}
	if latest.Stdout == other.Stdout || !strings.Contains(latest.Stdout, "summary") && !strings.Contains(latest.Stdout, "msg_05") {
		t.Errorf("the latest session and ses_02 render alike:\n%s\n---\n%s", latest.Stdout, other.Stdout)
	}
	named := cliRun(t, env, false, "render", db, "--format", "ids", "--session", "ses_01")
	if named.Code != 0 || named.Stdout != latest.Stdout {
		t.Errorf("--session ses_01 (the latest) differs from the default: exit %d\n%s\n---\n%s", named.Code, named.Stdout, latest.Stdout)
	}
	// (the glob skips the cache's own dot files: .pruned)
	entries, _ := filepath.Glob(filepath.Join(env["XDG_CACHE_HOME"], "ctxfold", "live", "[0-9a-f]*"))
	if len(entries) != 3 {
		t.Errorf("cache entries: %d, want one per session asked for and the default (3)", len(entries))
	}
	missing := cliRun(t, env, false, "render", db, "--session", "ses_99")
	if missing.Code != 2 || !strings.Contains(missing.Stderr, "ses_99") {
		t.Errorf("an unknown session: exit %d, %q", missing.Code, missing.Stderr)
	}
}
