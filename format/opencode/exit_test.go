package opencode_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/transcript"
)

// A bash call whose command exited non-zero is a failure (OpenCode 1.18
// keeps its status completed and records the exit in its metadata): its
// result is flagged is_error with the exit code, as audit's error facts
// need; an exit of 0 is not.
func TestBashExitCodeIsAFailure(t *testing.T) {
	rec, err := os.ReadFile(filepath.Join("..", "..", "testdata", "interop", "opencode", "1.18.33", "tool", "export-1.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		exit string
		fail bool
	}{{"0", false}, {"2", true}} {
		doc := bytes.Replace(rec, []byte(`"exit": 0`), []byte(`"exit": `+c.exit), 1)
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
			isErr := string(n.Metadata["is_error"]) == "true"
			if isErr != c.fail {
				t.Errorf("exit %s: is_error %v", c.exit, isErr)
			}
		}
		if results != 1 {
			t.Fatalf("exit %s: %d tool results", c.exit, results)
		}
	}
}
