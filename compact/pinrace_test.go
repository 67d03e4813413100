package compact

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/store"
)

// A pin made while the summarizer runs (issue 30, item 3) is not lost:
// the summary being written was asked for without it, so the re-check
// under the lock sees the pinned set of the covered nodes change and
// nothing is written (exit 4); the next run quotes the pin.
func TestPinDuringCompactionIsNotLost(t *testing.T) {
	ctx := context.Background()
	dir := sessiontest.CopyFixture(t, "tools")
	s := &stubSummarizer{text: "## Objective\nshort", fn: func(context.Context) error {
		_, err := store.Update(ctx, dir, store.WriteOptions{}, func(tx *store.Tx) error {
			return tx.Pin([]string{"u1"}, true, "2026-11-30T12:00:00Z")
		})
		return err
	}}
	res, err := Compact(ctx, opts(dir, s, 300))
	var changed *ChangedError
	if !errors.As(err, &changed) || res.Outcome != OutcomeChanged {
		t.Fatalf("a pin during the summarizer's run: %v %+v", err, res)
	}
	st, err := store.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range st.All() {
		if r.Summary {
			t.Fatalf("summary %q written without the pin made during the run", r.ID)
		}
	}
	st.Close()
	// Run again: the pin is quoted.
	s.fn = nil
	res, err = Compact(ctx, opts(dir, s, 300))
	if err != nil || res.Outcome != OutcomeSucceeded {
		t.Fatalf("second run: %v %+v", err, res)
	}
	u1, _ := sessiontest.StoredNode(t, dir, "u1"), 0
	if !slices.Contains(s.last.Pinned, u1.Content.PlainText()) {
		t.Fatalf("the second run was not asked to quote the pin: %q", s.last.Pinned)
	}
}
