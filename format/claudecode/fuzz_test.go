package claudecode

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// FuzzImport: whatever the input, the importer either refuses it with one
// *transcript.ParseError line, or produces nodes the store accepts and a
// graph with no integrity fault. Run: go test ./format/claudecode -fuzz FuzzImport
func FuzzImport(f *testing.F) {
	for _, name := range []string{"sess-0001.jsonl", "inline/sess-0002.jsonl", "sess-0001/subagents/agent-sub1.jsonl"} {
		data, err := os.ReadFile(filepath.Join(fixtureDir, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"type":"user","uuid":"u","parentUuid":"u","message":{"content":[{"type":"tool_result","tool_use_id":"x"}]}}`))
	f.Add([]byte(`{"type":"assistant","uuid":"a","parentUuid":null,"requestId":"r","message":{"id":"m","content":[{"type":"tool_use","id":"t","name":"Task","input":{"prompt":"p"}}]}}
{"type":"user","uuid":"s","parentUuid":null,"isSidechain":true,"message":{"content":"p"}}
{"type":"assistant","uuid":"b","parentUuid":"s","requestId":"r","message":{"id":"m","content":[{"type":"tool_use","id":"t2","name":"Bash"}]}}
{"type":"system","subtype":"compact_boundary","uuid":"c","parentUuid":null,"logicalParentUuid":"s"}
{"type":"user","uuid":"d","parentUuid":"c","isCompactSummary":true,"message":{"content":"sum"}}
{"type":"user","uuid":"e","parentUuid":"d","message":{"content":[{"type":"tool_result","tool_use_id":"t"},{"type":"tool_result","tool_use_id":"t"}]}}`))
	f.Add([]byte(`{"type":"system","subtype":"compact_boundary","uuid":"c","parentUuid":null}
{"type":"user","uuid":"summary_1","parentUuid":"c","isCompactSummary":true,"message":{"content":"sum"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "s.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var tgt memTarget
		err := Import(context.Background(), []string{path}, Options{MaxLineBytes: 1 << 16}, &tgt)
		if err != nil {
			var pe *transcript.ParseError
			if !errors.As(err, &pe) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one ParseError line: %q", err)
			}
			return
		}
		root := t.TempDir()
		for i, c := range tgt.convs {
			if c.order != nil {
				t.Fatal(c.order)
			}
			if strings.ContainsAny(c.name, `/\`) || strings.HasPrefix(c.name, ".") || strings.Contains(c.name, "..") {
				t.Fatalf("unsafe conversation name %q", c.name)
			}
			dir := filepath.Join(root, string(rune('a'+i%26)), c.name)
			writeSession(t, dir, c)
			s, err := store.Open(dir, store.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, errs := dag.New(s); len(errs) > 0 {
				t.Fatalf("integrity: %v", errs[0])
			}
			s.Close()
		}
	})
}
