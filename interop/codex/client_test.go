package codex_test

import (
	"os"
	"path/filepath"
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
