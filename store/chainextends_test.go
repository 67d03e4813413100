package store_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ctxfold/ctxfold/store"
)

// ChainExtends proves from session.json alone that a session only grew by
// the bytes after an earlier commit, and refuses anything else.
func TestChainExtends(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the recorded stat is read on linux only")
	}
	dir := newSession(t)
	mustAppend(t, dir, store.AppendOptions{}, user("u1", "", "one"), asst("a1", "u1", "two"))
	before, err := store.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, dir, store.AppendOptions{}, user("u2", "a1", "three"))
	after, err := store.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, store.NodesFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tail := data[*before.NodesBytes:*after.NodesBytes]
	st, _ := os.Stat(path)
	if why := store.ChainExtends(after, before.NodesHashState, tail, st); why != "" {
		t.Fatalf("a plain append: %s", why)
	}
	other := append([]byte{}, tail...)
	other[len(other)/2] ^= 1
	if why := store.ChainExtends(after, before.NodesHashState, other, st); why == "" {
		t.Error("other bytes than the appended ones were accepted")
	}
	if why := store.ChainExtends(after, before.NodesHashState, tail[1:], st); why == "" {
		t.Error("a shorter tail was accepted")
	}
	if why := store.ChainExtends(after, "", tail, st); why == "" {
		t.Error("a chain that started between the commits was accepted")
	}
	if why := store.ChainExtends(after, "!!", tail, st); why == "" {
		t.Error("an unreadable state was accepted")
	}
	// A write since the commit (same bytes, new ctime) is not vouched for.
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	st, _ = os.Stat(path)
	if why := store.ChainExtends(after, before.NodesHashState, tail, st); why == "" {
		t.Error("a file written after its commit was vouched for")
	}
}
