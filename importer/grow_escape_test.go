package importer

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// Re-importing the same log adds nothing and reports no stored node as
// differing, also when their text holds <, > or & (which json.Marshal
// would escape and the store does not).
func TestAppendSameLogNoDiffering(t *testing.T) {
	src := filepath.Join("..", "testdata", "interop", "claude-code", "2.1.328", "tool", "transcript", "00000000-0000-4000-8000-000000000001.jsonl")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("<system-reminder>")) {
		t.Fatal("the fixture no longer holds a '<': pick another")
	}
	out := filepath.Join(t.TempDir(), "s")
	ctx := context.Background()
	if _, err := Import(ctx, Options{From: Auto, Files: []string{src}, Out: out}); err != nil {
		t.Fatal(err)
	}
	rep, err := Import(ctx, Options{From: Auto, Files: []string{src}, Out: out, Append: true})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Sessions[0]
	if s.Nodes != 0 || s.Differing != 0 || s.Continued != 0 || len(rep.Warnings) != 0 {
		t.Errorf("re-import of the same log: %d new, %d differing, %d continued, warnings %q", s.Nodes, s.Differing, s.Continued, rep.Warnings)
	}
}
