package compact

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/summarize"
)

// A second compaction with the same options and no new turns is a no-op
// (the fourth message of docs/COMPACT.md §5), whatever rule chose the first cut: the
// target, the latest turn, or the four conversational messages.
func TestCompactTwiceIsANoOp(t *testing.T) {
	nodes := sessiontest.Generate(sessiontest.NewRand(), 30)
	for _, keep := range []int{50, 300, 1000, 3000, 8000} {
		dir := filepath.Join(t.TempDir(), "s")
		if _, err := store.Init(dir, "gpt-4o", store.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := store.Update(context.Background(), dir, store.WriteOptions{}, func(tx *store.Tx) error {
			_, err := tx.Append(nodes, store.AppendOptions{})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		first, err := Compact(context.Background(), opts(dir, summarize.Extractive{}, keep))
		if err != nil {
			t.Fatalf("keep %d: first: %v", keep, err)
		}
		if first.Outcome != OutcomeSucceeded {
			continue
		}
		second, err := Compact(context.Background(), opts(dir, summarize.Extractive{}, keep))
		if err != nil {
			t.Fatalf("keep %d: second: %v", keep, err)
		}
		if second.Outcome != OutcomeNoOp || second.Reason != ReasonNothingNew {
			t.Errorf("keep %d: second run %s (%s), covering %d more; want a no-op", keep, second.Outcome, second.Reason, len(second.CoversIDs)-len(first.CoversIDs))
		}
	}
}
