package codex_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// codexBin is the client the live tests drive: $CTXFOLD_CODEX_BIN (a newer
// client is tested by this one variable, docs/INTEROP.md), else the pinned
// one record.sh installs under $CTXFOLD_INTEROP_CACHE or
// $HOME/.cache/ctxfold-interop.
func codexBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("CTXFOLD_CODEX_BIN")
	if bin == "" {
		bin = filepath.Join(interopCache(), "codex-"+Version, "node_modules", ".bin", "codex")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("client %s: %v (run interop/codex/record.sh once to install it, or set CTXFOLD_CODEX_BIN)", bin, err)
	}
	return bin
}

// interopCache is where record.sh installs the pinned clients.
func interopCache() string {
	if dir := os.Getenv("CTXFOLD_INTEROP_CACHE"); dir != "" {
		return dir
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "ctxfold-interop")
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
