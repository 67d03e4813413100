package codex_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/format/codex"
	"github.com/ctxfold/ctxfold/format/input"
)

// FuzzResumeState: whatever a saved Codex resume state holds (resume.bin,
// its hash fixed up in state.json), a resumed import refuses it or
// finishes — never a panic (issue 30, item 7). Seeded with the states a
// real rollout's import saves at two cuts. Run: go test
// ./format/codex -run '^$' -fuzz FuzzResumeState
func FuzzResumeState(f *testing.F) {
	src, err := filepath.Abs("../../testdata/interop/codex/0.169.0/tool/rollout-2026-01-01T00-00-00-00000000-0000-7000-8000-000000000001.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	full, err := os.ReadFile(src)
	if err != nil {
		f.Fatal(err)
	}
	dir := f.TempDir()
	for _, frac := range []int{2, 4} {
		cut := len(full) / frac
		for cut < len(full) && full[cut-1] != '\n' {
			cut++
		}
		file := filepath.Join(dir, filepath.Base(src))
		if err := os.WriteFile(file, full[:cut], 0o644); err != nil {
			f.Fatal(err)
		}
		res := &input.Resume{}
		if err := codex.ImportResumable(context.Background(), []string{file}, codex.Options{}, res, &cpTarget{}); err != nil || res.Point == nil {
			f.Fatalf("cut %d: %v", cut, err)
		}
		f.Add(res.Point.State)
	}
	f.Fuzz(func(t *testing.T, state []byte) {
		_ = codex.ImportResumable(context.Background(), []string{src}, codex.Options{}, &input.Resume{State: state}, &cpTarget{})
	})
}
