package compact

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/summarize"
)

// A session that already fails verify is refused before planning: exit 2,
// the first code, node and file:line named, nothing written, no event.
// Warnings alone do not block.
func TestCompactRefusesSessionsFailingVerify(t *testing.T) {
	cases := []struct {
		fixture, code, node string
		refused             bool
	}{
		{"splice_mismatch", "splice_mismatch", "summary_1", true},
		{"covers_missing", "covers_missing", "", true},
		{"tool_call_unanswered", "tool_call_unanswered", "", true},
		{"event_count_mismatch", "event_count_mismatch", "", true},
		{"tool_call_pending", "", "", false},
		{"active_summary_unset", "", "", false},
		{"interrupted_write", "", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.fixture, func(t *testing.T) {
			dir := sessiontest.CopyFixture(t, filepath.Join("broken", tc.fixture))
			files := snapshotFiles(t, dir)
			evBefore, _ := os.ReadFile(filepath.Join(dir, "events.jsonl"))
			for _, dry := range []bool{true, false} {
				o := opts(dir, summarize.Extractive{}, 10)
				run := Compact
				if dry {
					run = DryRun
				}
				if !tc.refused {
					_, err := run(context.Background(), o)
					var be *BrokenError
					if errors.As(err, &be) {
						t.Fatalf("a session with only warnings was refused: %v", err)
					}
					return
				}
				o.Summarizer = mustNotCall{t}
				res, err := run(context.Background(), o)
				var be *BrokenError
				if !errors.As(err, &be) || res != nil {
					t.Fatalf("dry=%v: %v %+v, want a *BrokenError", dry, err, res)
				}
				if be.Finding.Code != tc.code {
					t.Fatalf("code %q, want %q", be.Finding.Code, tc.code)
				}
				msg := err.Error()
				if strings.Contains(msg, "\n") || !strings.Contains(msg, tc.code) ||
					!strings.Contains(msg, filepath.Join(dir, "nodes.jsonl")+":") && !strings.Contains(msg, dir) {
					t.Fatalf("message %q does not name the code and place", msg)
				}
				if tc.node != "" && !strings.Contains(msg, `node "`+tc.node+`"`) {
					t.Fatalf("message %q does not name node %q", msg, tc.node)
				}
				if be.Hint() != "run 'ctxfold verify "+dir+"'" {
					t.Fatalf("hint %q", be.Hint())
				}
				evAfter, _ := os.ReadFile(filepath.Join(dir, "events.jsonl"))
				if snapshotFiles(t, dir) != files || string(evAfter) != string(evBefore) {
					t.Fatal("a refused compaction wrote to the session")
				}
			}
		})
	}
}
