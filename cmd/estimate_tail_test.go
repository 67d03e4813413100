package cmd

import (
	"encoding/json"
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
	if err := os.WriteFile(filepath.Join(elsewhere, "keep"), []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
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
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 1 {
		t.Errorf("written or removed through the symlink: %v", ents)
	}
}

// TestStatuslineTailHookWindow: with the client's window in the hook, the
// tail and the whole file give the same status, field for field (the
// window and its source included); with --no-calibrate the whole file
// answers.
func TestStatuslineTailHookWindow(t *testing.T) {
	tr := claudeInteropTranscripts(t)
	hook := statusHookJSON(t, tr["compact"], "Sonnet 4.5", `,"context_window":{"context_window_size":1000000}`)
	tail, full := statusTailAndFull(t, hook)
	if tail.Read != readTail || full.Read != readFull {
		t.Fatalf("read %q and %q", tail.Read, full.Read)
	}
	full.RawTokens = 0
	if tail.Status != full.Status || tail.Compactions != full.Compactions || tail.DisplayName != full.DisplayName || tail.Window != 1000000 || tail.WindowSource != windowFromHook {
		t.Errorf("tail %+v ↻%d\nfull %+v ↻%d", tail.Status, tail.Compactions, full.Status, full.Compactions)
	}
	r := statusRun(t, t.TempDir(), nil, hook, "--json", "--tail-min-bytes", "1", "--no-calibrate")
	var raw StatusLine
	if err := json.Unmarshal([]byte(r.Stdout), &raw); err != nil || raw.Read != readFull || raw.RawTokens == 0 {
		t.Errorf("--no-calibrate: read %q, raw %d (%v); want the whole file", raw.Read, raw.RawTokens, err)
	}
}
