package claudecodeinterop

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOracleModelSwitch: the real client runs a turn, `/model
// claude-sonnet-4-6` and a second turn in one process
// (interop/claude-code/record.sh model-switch). 2.1.222 writes the
// command's output as a system record ("Set model to Sonnet 4.6 for this
// session only"), 2.1.328 and 2.1.332 too, the name in backticks; each
// sends the second turn to the model it set. Imported from the transcript
// cut before that turn's reply — what the status line reads while the
// request is in flight — the session's model is the one the request named,
// so estimate budgets and counts it with that model's window and tokenizer
// (docs/INTEROP-claude-code.md, "A model switch").
func TestOracleModelSwitch(t *testing.T) {
	for _, v := range []string{"2.1.222", Version, Versions[len(Versions)-1]} {
		t.Run(v, func(t *testing.T) {
			dir := filepath.Join(fixtureRootOf(v), "model-switch")
			var req struct {
				Model string `json:"model"`
			}
			b, err := os.ReadFile(filepath.Join(dir, "requests", "0003-messages.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &req); err != nil || req.Model != "claude-sonnet-4-6" {
				t.Fatalf("request 0003: model %q (%v), want the one /model set", req.Model, err)
			}
			f := sessionFiles(t, dir)[0]
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitAfter(string(data), "\n")
			last := -1
			for i, l := range lines {
				if strings.Contains(l, `"type":"assistant"`) {
					last = i
				}
			}
			cut := filepath.Join(t.TempDir(), filepath.Base(f))
			if err := os.WriteFile(cut, []byte(strings.Join(lines[:last], "")), 0o644); err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(t.TempDir(), "s")
			mustRun(t, "import", cut, "-o", dst)
			var meta struct {
				Model string `json:"model"`
			}
			m, err := os.ReadFile(filepath.Join(dst, "session.json"))
			if err != nil || json.Unmarshal(m, &meta) != nil {
				t.Fatalf("session.json: %v", err)
			}
			if meta.Model != req.Model {
				t.Errorf("imported before the reply: model %q, want the request's %q", meta.Model, req.Model)
			}
		})
	}
}
