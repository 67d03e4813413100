package codex_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/hooktest"
)

// codexBin is the client the live tests drive: $CTXFOLD_CODEX_BIN (a newer
// client is tested by this one variable, docs/INTEROP.md), else the pinned
// one record.sh installs under $CTXFOLD_INTEROP_CACHE or
// $HOME/.cache/ctxfold-interop.
func codexBin(t *testing.T) string {
	t.Helper()
	return hooktest.ClientBin(t, "CTXFOLD_CODEX_BIN", "codex-"+Version, "codex", "interop/codex/record.sh")
}

// committedVersion is the version whose committed fixtures a fresh
// recording is compared with: the client's own when its recordings are
// committed (Versions), else the pinned one's, which the log says.
func committedVersion(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("CTXFOLD_CODEX_BIN")
	if bin == "" {
		return Version
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", bin, err)
	}
	v := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "codex-cli "))
	if !slices.Contains(Versions, v) {
		t.Logf("client %s has no committed recordings; comparing with %s's", v, Version)
		return Version
	}
	return v
}
