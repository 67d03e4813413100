package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The npm install path end to end (issue 38, docs/INSTALL.md): a local
// Verdaccio, the packages published by scripts/npm-publish.sh from the
// release binaries in $CTXFOLD_NPM_DIST, then npx, setup from npx and npm
// install -g from a clean HOME (scripts/npm-e2e.sh says each check). Behind
// CTXFOLD_LONG: it installs Verdaccio from npm and needs the six release
// binaries (.ci/run sets CTXFOLD_NPM_DIST to GoReleaser's dist/).
func TestNPMInstall(t *testing.T) {
	if os.Getenv("CTXFOLD_LONG") == "" {
		t.Skip("set CTXFOLD_LONG=1 and CTXFOLD_NPM_DIST=DIST (the release binaries) to publish to a local registry and install from it")
	}
	dist := os.Getenv("CTXFOLD_NPM_DIST")
	if dist == "" {
		t.Skip("CTXFOLD_NPM_DIST is not set: build the release binaries (goreleaser release --snapshot, or scripts/release-build.sh DIR VERSION) and name them")
	}
	dist, _ = filepath.Abs(dist)
	out, err := exec.Command("bash", "scripts/npm-e2e.sh", dist).CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/npm-e2e.sh %s: %v\n%s", dist, err, out)
	}
	t.Logf("%s", out)
}
