package qwencode_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/internal/interoptest"
)

// TestEstimateWindow: Qwen Code records, on each assistant record, the
// window it measured the request against (contextWindowSize); each
// recording is budgeted on it, from the session.
func TestEstimateWindow(t *testing.T) {
	for _, sc := range []string{"chat", "compression"} {
		files, _ := filepath.Glob(filepath.Join(recordings, sc, "chats", "*.jsonl"))
		if len(files) != 1 {
			t.Fatalf("%s: %v", sc, files)
		}
		var res struct {
			Window       int    `json:"window"`
			WindowSource string `json:"window_source"`
		}
		if err := json.Unmarshal([]byte(interoptest.Must(t, "estimate", files[0], "--json")), &res); err != nil {
			t.Fatal(err)
		}
		if res.Window != 1000000 || res.WindowSource != "session" {
			t.Errorf("%s: window %d from %q, want 1000000 from the session", sc, res.Window, res.WindowSource)
		}
	}
}
