package claudecodeinterop

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// claudeBin is the client the live tests drive: $CTXFOLD_CLAUDE_BIN (a
// newer client is tested by this one variable), else the pinned one
// record.sh installs under $CTXFOLD_INTEROP_CACHE or
// $HOME/.cache/ctxfold-interop.
func claudeBin(t *testing.T) string {
	t.Helper()
	client := os.Getenv("CTXFOLD_CLAUDE_BIN")
	if client == "" {
		cache := os.Getenv("CTXFOLD_INTEROP_CACHE")
		if cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache", "ctxfold-interop")
		}
		client = filepath.Join(cache, "claude-code-"+Version, "node_modules", ".bin", "claude")
	}
	if _, err := os.Stat(client); err != nil {
		t.Fatalf("client %s: %v (run interop/claude-code/record.sh once to install it, or set CTXFOLD_CLAUDE_BIN)", client, err)
	}
	return client
}

// committedVersion is the version of client whose committed fixtures a
// fresh recording is compared with: its own when committed (Versions),
// else the pinned one's, which the log says.
func committedVersion(t *testing.T, client string) string {
	t.Helper()
	out, err := exec.Command(client, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", client, err)
	}
	v, _, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	if !slices.Contains(Versions, v) {
		t.Logf("client %s has no committed recordings; comparing with %s's", v, Version)
		return Version
	}
	return v
}
