package live

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
)

// sessionMeta is what a command reads of session.json besides the nodes.
func sessionMeta(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "session.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for _, k := range []string{"head", "model", "model_context_window", "active_summary_id", "format_version"} {
		out[k] = m[k]
	}
	return out
}

func metaJSON(t *testing.T, dir string) string {
	t.Helper()
	b, _ := json.Marshal(sessionMeta(t, dir))
	return string(b)
}

// Issue 30, item 1: an incremental refresh of a Codex rollout keeps the
// context window the rollout recorded before the resume point, as a fresh
// import of the same bytes does (the cut and the half line appended are
// the ones the fault campaign found).
func TestIncrementalCodexKeepsRecordedWindow(t *testing.T) {
	src := sessiontest.External(t, "codex", "madshn-localpush", "rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl")
	full, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), filepath.Base(src))
	cache := t.TempDir()
	for _, cut := range []int{418908, 418908 + 539} {
		if err := os.WriteFile(file, full[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		e, err := openClosed(context.Background(), file, Options{CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		gb, wb := metaJSON(t, e.Session), metaJSON(t, freshImport(t, file))
		if gb != wb {
			t.Errorf("cut %d (%s): session.json %s, a fresh import says %s", cut, e.Update, gb, wb)
		}
	}
}
