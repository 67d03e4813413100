package importer

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCopilotTakenByNoOther: a GitHub Copilot CLI event log used to be
// detected as Gemini CLI (its session.start names a sessionId and a
// startTime) and imported as an empty session. No other format's Detect
// may claim one, wherever it stands in the vendor list.
func TestCopilotTakenByNoOther(t *testing.T) {
	files, _ := filepath.Glob("../testdata/interop/copilot/*/*/events.jsonl")
	files = append(files, "../fixtures/import/copilot/events.jsonl")
	if len(files) < 2 {
		t.Fatalf("no Copilot logs: %v", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		head := data[:min(len(data), headBytes)]
		for _, v := range vendors {
			if got := v.detect(head); got != (v.name == Copilot) {
				t.Errorf("%s: %s's Detect says %v", f, v.name, got)
			}
		}
		if got, err := DetectFile(f); got != Copilot || err != nil {
			t.Errorf("%s: detected as %q (%v)", f, got, err)
		}
	}
}
