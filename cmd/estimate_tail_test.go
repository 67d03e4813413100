package cmd

import (
	"os"
	"path/filepath"
	"testing"
)

// TestEstimateTailFallsBack: whatever stops the tail read — here its cache
// directory replaced by a symlink, which the cache never writes through —
// estimate --tail answers from the whole file, as the status line does,
// and nothing is written where the link points.
func TestEstimateTailFallsBack(t *testing.T) {
	file := transcriptFile(t)
	cache := t.TempDir()
	env := map[string]string{"XDG_CACHE_HOME": cache}
	if r := runEnv(t, cliEnv{Env: env}, "estimate", "--tail", "--json", file); r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	dirs, _ := filepath.Glob(filepath.Join(cache, "*", "live", "*.tail"))
	if len(dirs) != 1 {
		t.Fatalf("tail directories %v; want one", dirs)
	}
	elsewhere := t.TempDir()
	if err := os.RemoveAll(dirs[0]); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, dirs[0]); err != nil {
		t.Fatal(err)
	}
	full := runEnv(t, cliEnv{Env: env}, "estimate", "--json", file)
	tail := runEnv(t, cliEnv{Env: env}, "estimate", "--tail", "--json", file)
	if tail.Code != 0 || full.Code != 0 {
		t.Fatalf("exit %d (--tail) and %d: %s %s", tail.Code, full.Code, tail.Stderr, full.Stderr)
	}
	ta, fu := decodeJSON(t, tail.Stdout), decodeJSON(t, full.Stdout)
	if ta["tokens"] != fu["calibration"].(map[string]any)["calibrated_total"] || ta["budget_pct"] != fu["budget_pct"] {
		t.Errorf("--tail: %v\nwhole: %v", ta, fu)
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Errorf("written through the symlink: %v", ents)
	}
}
