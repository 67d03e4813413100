package importer_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
)

// An export read from a pipe (cat x | ctxfold import /dev/stdin) is
// detected and imported whole: detection must not eat the bytes the
// importer then reads. Every format goes through the same path.
func TestPipedInputImportsWhole(t *testing.T) {
	for _, file := range []string{
		"claude-code/sess-0001.jsonl",
		"codex/rollout-compacted.jsonl",
		"chatgpt/conversations.json",
		"openai/messages.json",
	} {
		t.Run(file, func(t *testing.T) {
			// A pipe has no neighbours, so the reference import reads a copy
			// alone in a directory (no sidechain files beside it).
			data, err := os.ReadFile(fixtures + file)
			if err != nil {
				t.Fatal(err)
			}
			alone := filepath.Join(t.TempDir(), filepath.Base(file))
			if err := os.WriteFile(alone, data, 0o644); err != nil {
				t.Fatal(err)
			}
			want, err := run(t, importer.Auto, filepath.Join(t.TempDir(), "file"), alone)
			if err != nil {
				t.Fatal(err)
			}
			fifo := filepath.Join(t.TempDir(), "pipe")
			if err := sessiontest.MakeFIFO(t, fifo, 0o600); err != nil {
				t.Skipf("no FIFOs here: %v", err)
			}
			go func() {
				w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
				if err != nil {
					return
				}
				w.Write(data)
				w.Close()
			}()
			got, err := run(t, importer.Auto, filepath.Join(t.TempDir(), "pipe"), fifo)
			if err != nil {
				t.Fatal(err)
			}
			if got.Format != want.Format || len(got.Sessions) != len(want.Sessions) {
				t.Fatalf("piped: format %q, %d sessions; file: %q, %d", got.Format, len(got.Sessions), want.Format, len(want.Sessions))
			}
			for k := range want.Sessions {
				if got.Sessions[k].Nodes != want.Sessions[k].Nodes || got.Sessions[k].Nodes == 0 {
					t.Fatalf("session %d: piped import wrote %d nodes, the file %d", k, got.Sessions[k].Nodes, want.Sessions[k].Nodes)
				}
			}
		})
	}
}
