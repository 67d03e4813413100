package qwen_test

import (
	"os"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/format/qwen"
	"github.com/ctxfold/ctxfold/transcript"
)

// Qwen Code records, on each assistant record, the window it measured the
// request against (its contextWindowSize setting, else its table's): a
// custom model's window comes from the session file itself.
func TestRecordedWindow(t *testing.T) {
	data, err := os.ReadFile(chat(t, "tool"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(data), `"model":"qwen3-coder-plus"`, `"model":"my-local-model"`)
	text = strings.ReplaceAll(text, `"contextWindowSize":1000000`, `"contextWindowSize":32768`)
	c, err := load(t, write(t, text), qwen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var windows int
	for _, n := range c.Nodes {
		if n.Role == transcript.RoleAssistant && n.Usage != nil {
			if w := n.Usage.ContextWindow(); w != 32768 {
				t.Fatalf("node %s: recorded window %d, want 32768", n.ID, w)
			}
			windows++
		}
	}
	if windows == 0 || c.Model != "my-local-model" {
		t.Fatalf("%d assistant nodes with usage, model %q", windows, c.Model)
	}
}
