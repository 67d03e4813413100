package compact

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/summarize"
	"github.com/ctxfold/ctxfold/verify"
)

// Real single-prompt agent runs (docs/COMPACT.md §2, one long turn): each
// is one request and its tool steps. Compaction keeps the tail from a step
// of the turn, the session still verifies, and the summary's Plan is the
// agent's latest todo state as the transcript records it (Codex
// update_plan, Claude Code TodoWrite).
func TestCompactRealLongTurns(t *testing.T) {
	for _, c := range []struct {
		rel  []string
		keep int
		todo string // the todo tool whose latest state is the plan
	}{
		{[]string{"codex", "AcidicSoil-codex-session-view", "rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"}, 200, "update_plan"},
		{[]string{"claude-code", "d-kimuson-claude-code-viewer", "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"}, 100, "TodoWrite"},
		{[]string{"claude-code", "d-kimuson-claude-code-viewer", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"}, 100, "TodoWrite"},
	} {
		t.Run(c.rel[len(c.rel)-1], func(t *testing.T) {
			dir := importExternal(t, c.rel...)
			res, err := Compact(context.Background(), opts(dir, summarize.Extractive{}, c.keep))
			if err != nil || res.Outcome != OutcomeSucceeded || !res.Plan.WithinTurn {
				t.Fatalf("compact: %v %+v", err, res)
			}
			vr, err := verify.Dir(context.Background(), dir, store.OpenOptions{}, verify.Options{}, func(f verify.Finding) {
				if f.Severity == verify.Error {
					t.Errorf("verify: %s %s", f.Code, f)
				}
			})
			if err != nil || !vr.OK() {
				t.Fatalf("verify: %v %+v", err, vr)
			}
			if sv := res.Survival; sv == nil || sv.Kept != sv.Total {
				t.Errorf("survival %+v", sv)
			}
			text := sessiontest.StoredNode(t, dir, res.SummaryID).Content.PlainText()
			want := latestTodo(t, sessiontest.External(t, c.rel...), c.todo)
			_, plan, _ := strings.Cut(text, "## Plan\n")
			plan, _, _ = strings.Cut(plan, "\n\n")
			if len(want) == 0 || plan != strings.Join(want, "\n") {
				t.Errorf("plan:\n%s\nwant the latest %s state:\n%s", plan, c.todo, strings.Join(want, "\n"))
			}
		})
	}
}

// latestTodo reads the last call of tool in a raw transcript, as the
// summary's plan lines: "- [x] step" done, "- [>] step" in progress,
// "- [ ] step" open.
func latestTodo(t *testing.T, path, tool string) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var last []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if !strings.Contains(sc.Text(), `"`+tool+`"`) {
			continue
		}
		var line struct {
			Payload struct {
				Name, Arguments string
			}
			Message struct {
				Content []struct {
					Name  string
					Input struct{ Todos []map[string]any }
				}
			}
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		if line.Payload.Name == tool {
			var args struct{ Plan []map[string]any }
			if json.Unmarshal([]byte(line.Payload.Arguments), &args) == nil {
				last = args.Plan
			}
		}
		for _, b := range line.Message.Content {
			if b.Name == tool {
				last = b.Input.Todos
			}
		}
	}
	var out []string
	for _, s := range last {
		text, _ := s["content"].(string)
		if text == "" {
			text, _ = s["step"].(string)
		}
		mark := map[string]string{"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}[s["status"].(string)]
		out = append(out, "- "+mark+" "+text)
	}
	return out
}
