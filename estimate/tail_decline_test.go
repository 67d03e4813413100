package estimate_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/live"
)

// TestTailDeclinesUncalibrated: with calibration off the figure is the
// raw count of the whole view, which no tail holds: the tail read
// declines at once, without copying tails of 1, 4, 16 and 64 MiB and
// importing each first.
func TestTailDeclinesUncalibrated(t *testing.T) {
	file := filepath.Join("..", "testdata", "interop", "claude-code", "2.1.328", "compact", "transcript", "00000000-0000-4000-8000-000000000001.jsonl")
	cache := t.TempDir()
	so := estimate.SessionOptions{Estimate: estimate.Options{NoCalibrate: true}}
	_, err := estimate.FromTail(context.Background(), file, estimate.TailOptions{Live: live.Options{CacheDir: cache}, Session: so, MinBytes: 4 << 10})
	if !errors.Is(err, estimate.ErrTailUnusable) {
		t.Fatalf("FromTail with calibration off: %v; want ErrTailUnusable", err)
	}
	if tails, _ := filepath.Glob(filepath.Join(cache, "live", "*.tail")); len(tails) != 0 {
		t.Errorf("tails copied for nothing: %v", tails)
	}
	if _, err := os.Stat(filepath.Join(cache, "live")); err == nil {
		t.Error("the cache was written for nothing")
	}
}
