package claudecodeinterop

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/hooktest"
)

// claudeBin is the client the live tests drive: $CTXFOLD_CLAUDE_BIN (a
// newer client is tested by this one variable), else the pinned one
// record.sh installs under $CTXFOLD_INTEROP_CACHE or
// $HOME/.cache/ctxfold-interop.
func claudeBin(t *testing.T) string {
	t.Helper()
	return hooktest.ClientBin(t, "CTXFOLD_CLAUDE_BIN", "claude-code-"+Version, "claude", "interop/claude-code/record.sh")
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
