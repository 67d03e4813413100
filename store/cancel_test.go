package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// TestAppendStopsEarlyWhenInterrupted: a large batch interrupted before
// its append stops within its first 4096 nodes, instead of validating the
// whole batch first (seconds for 100k nodes, past cmd's grace period): the
// bad node near the end is never reached, and nothing is written.
func TestAppendStopsEarlyWhenInterrupted(t *testing.T) {
	dir := newSession(t)
	before, _ := os.ReadFile(filepath.Join(dir, store.NodesFile))
	nodes := make([]transcript.Node, 9000)
	for i := range nodes {
		nodes[i] = user(fmt.Sprintf("n%d", i), "", "hi")
	}
	nodes[8999].Role = "nobody" // a validation error, if validation got there
	ctx, cancel := context.WithCancel(context.Background())
	_, err := store.Update(ctx, dir, testWrite, func(tx *store.Tx) error {
		cancel()
		_, err := tx.Append(nodes, store.AppendOptions{})
		return err
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, store.NodesFile))
	if string(before) != string(after) {
		t.Fatal("an interrupted append wrote nodes")
	}
}
