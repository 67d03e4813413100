package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// Create a session, append a turn and a reply under the lock, then read
// the index back.
func ExampleUpdate() {
	tmp, _ := os.MkdirTemp("", "ctxfold-example-")
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "s")
	if _, err := store.Init(dir, "gpt-4o", store.WriteOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	_, err := store.Update(context.Background(), dir, store.WriteOptions{}, func(tx *store.Tx) error {
		res, err := tx.Append([]transcript.Node{
			{ID: "u1", Role: transcript.RoleUser, Content: transcript.TextContent("What is 2+2?")},
			{ID: "a1", Role: transcript.RoleAssistant, Content: transcript.TextContent("4")},
		}, store.AppendOptions{})
		if err != nil {
			return err
		}
		fmt.Println("appended", res.IDs, "HEAD", res.Head)
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := store.Open(dir, store.OpenOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	for _, r := range s.All() {
		fmt.Printf("line %d: %s (%s) after %q\n", r.Line, r.ID, r.Role, r.Predecessor)
	}
	// Output:
	// appended [u1 a1] HEAD a1
	// line 1: u1 (user) after ""
	// line 2: a1 (assistant) after "u1"
}
