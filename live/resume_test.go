package live

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/format/input"
)

// stateWrite.wait is what every refresh path calls, some twice (saveResume,
// then refresh's deferred wait): nil-safe, and the same answer each time.
func TestStateWriteWait(t *testing.T) {
	var none *stateWrite
	if err := none.wait(); err != nil {
		t.Errorf("nil write: %v", err)
	}
	if err := (&stateWrite{}).wait(); err != nil {
		t.Errorf("write never started: %v", err)
	}
	dir := t.TempDir()
	w := &stateWrite{}
	w.start(dir, &input.Point{State: []byte("state")})
	for i := range 2 {
		if err := w.wait(); err != nil {
			t.Fatalf("wait %d: %v", i, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, resumeFile)); err != nil || !bytes.Equal(b, []byte("state")) {
		t.Errorf("resume.bin after the wait: %q, %v", b, err)
	}
	bad := &stateWrite{}
	bad.start(filepath.Join(dir, "missing"), &input.Point{State: []byte("state")})
	for i := range 2 {
		if err := bad.wait(); err == nil {
			t.Errorf("wait %d on a write into a missing directory: no error", i)
		}
	}
}
