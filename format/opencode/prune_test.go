package opencode_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/transcript"
)

// A tool output OpenCode pruned (state.time.compacted set: its own
// compaction of old outputs) is read by the model as a placeholder from
// then on, so the result node holds the placeholder and keeps the output
// in metadata; an output not pruned is the output.
func TestPrunedToolOutput(t *testing.T) {
	rec, err := os.ReadFile(filepath.Join("..", "..", "testdata", "interop", "opencode", "1.18.33", "tool", "export-1.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ compacted, want string }{
		{"", "notes.txt\n"},
		{`, "compacted": 1796568199000`, "[Old tool result content cleared]"},
	} {
		doc := bytes.Replace(rec, []byte(`"end": 1796568097549`), []byte(`"end": 1796568097549`+c.compacted), 1)
		if c.compacted != "" && bytes.Equal(doc, rec) {
			t.Fatal("the recorded tool part's time was not found")
		}
		path := filepath.Join(t.TempDir(), "export.json")
		if err := os.WriteFile(path, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		var results int
		for _, n := range load(t, path).Convs[0].Nodes {
			if n.Role != transcript.RoleTool {
				continue
			}
			results++
			if n.Content.Text != c.want {
				t.Errorf("compacted %q: content %q", c.compacted, n.Content.Text)
			}
			var kept string
			json.Unmarshal(n.Metadata["opencode_pruned_output"], &kept)
			if (c.compacted != "") != (kept == "notes.txt\n") {
				t.Errorf("compacted %q: output kept %q", c.compacted, kept)
			}
		}
		if results != 1 {
			t.Fatalf("%d tool results", results)
		}
	}
}
