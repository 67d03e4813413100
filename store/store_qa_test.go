package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// TestAppendAnsweredTurnsAllowed is the other side of the
// "unanswered call" rejections in TestAppendRejects: once every call is
// answered a turn may follow, and a spawned turn (caller set) may start
// while its caller's call is still open.
func TestAppendAnsweredTurnsAllowed(t *testing.T) {
	dir := newSession(t)
	call := asst("a1", "", "")
	call.ToolCalls = []transcript.ToolCall{{ID: "c1", Name: "agent"}, {ID: "c2", Name: "sql"}}
	mustAppend(t, dir, store.AppendOptions{}, user("u1", "", "q"), call)
	sub := user("sub1", "", "do the sub task")
	sub.Caller = "a1"
	sub.Predecessor = ""
	mustAppend(t, dir, store.AppendOptions{RootFirst: true}, sub, asst("sub2", "sub1", "done"))
	results := transcript.Node{ID: "r", Predecessor: "a1", Role: transcript.RoleUser, Content: transcript.Content{IsBlocks: true, Blocks: []transcript.Block{
		{Type: transcript.BlockToolResult, ToolCallID: "c1", Text: "ok"},
	}}}
	tool := transcript.Node{ID: "t2", Predecessor: "r", Role: transcript.RoleTool, ToolCallID: "c2", Content: transcript.TextContent("rows")}
	mustAppend(t, dir, store.AppendOptions{}, results, tool, asst("a2", "", "answer"), user("u2", "", "next"))
}

// TestAppendCanceledWritesNothing: a write whose context is canceled
// before the commit point (Ctrl-C during a long append --file) returns the
// context's error and leaves every file as it was.
func TestAppendCanceledWritesNothing(t *testing.T) {
	dir := newSession(t)
	mustAppend(t, dir, store.AppendOptions{}, user("u1", "", "q"))
	before := snapshot(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := store.Update(ctx, dir, testWrite, func(tx *store.Tx) error {
		cancel() // the interrupt arrives while the batch is being prepared
		_, err := tx.Append([]transcript.Node{asst("a1", "", "long answer"), user("u2", "", "more")}, store.AppendOptions{})
		return err
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	sameSnapshot(t, before, snapshot(t, dir))
}

// TestSessionFilesMode: session.json is rewritten through a temp file;
// it must end up readable like nodes.jsonl (0644), not CreateTemp's 0600.
// Chmod ignores the umask, so the mode is exact.
func TestSessionFilesMode(t *testing.T) {
	dir := newSession(t)
	mustAppend(t, dir, store.AppendOptions{}, user("u1", "", "q"))
	st, err := os.Stat(filepath.Join(dir, store.MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Perm(); got != 0o644 {
		t.Fatalf("session.json mode %v, want 0644", got)
	}
}

// TestAppendToolGroupRule pins the tool-call model's two edges
// (docs/FORMAT.md §2, tool-call adjacency): a node that carries results
// continues its group whatever else it carries, so a later node may answer
// the rest; a node that answers some calls and makes new ones ends the group,
// so it may not leave older calls open. Each refusal writes nothing.
func TestAppendToolGroupRule(t *testing.T) {
	call := func(id string, calls ...string) transcript.Node {
		n := asst(id, "", "")
		for _, c := range calls {
			n.ToolCalls = append(n.ToolCalls, transcript.ToolCall{ID: c, Name: "bash"})
		}
		return n
	}
	results := func(id string, extra []transcript.Block, calls ...string) transcript.Node {
		n := transcript.Node{ID: id, Role: transcript.RoleUser, Content: transcript.Content{IsBlocks: true}}
		for _, c := range calls {
			n.Content.Blocks = append(n.Content.Blocks, transcript.Block{Type: transcript.BlockToolResult, ToolCallID: c, Text: "ok"})
		}
		n.Content.Blocks = append(n.Content.Blocks, extra...)
		return n
	}
	tool := func(id, c string) transcript.Node {
		return transcript.Node{ID: id, Role: transcript.RoleTool, ToolCallID: c, Content: transcript.TextContent("ok")}
	}
	text := []transcript.Block{{Type: transcript.BlockText, Text: "also check vet"}}
	image := []transcript.Block{{Type: transcript.BlockImage, Extra: map[string]json.RawMessage{"source": json.RawMessage(`"sha256:00"`)}}}

	for name, extra := range map[string][]transcript.Block{"text": text, "image": image} {
		t.Run("continues after "+name, func(t *testing.T) {
			dir := newSession(t)
			mustAppend(t, dir, store.AppendOptions{}, user("u1", "", "q"), call("a1", "c1", "c2"), results("r1", extra, "c1"), tool("t2", "c2"), asst("a2", "", "done"))
		})
	}
	t.Run("calls end the group", func(t *testing.T) {
		dir := newSession(t)
		mustAppend(t, dir, store.AppendOptions{}, user("u1", "", "q"), call("a1", "c1", "c2"))
		before := snapshot(t, dir)
		mixed := call("a2", "c3")
		mixed.Content = transcript.Content{IsBlocks: true, Blocks: []transcript.Block{{Type: transcript.BlockToolResult, ToolCallID: "c1", Text: "ok"}}}
		_, err := store.Update(context.Background(), dir, testWrite, func(tx *store.Tx) error {
			_, err := tx.Append([]transcript.Node{mixed}, store.AppendOptions{})
			return err
		})
		var invalid *store.ValidationError
		if !errors.As(err, &invalid) || !strings.Contains(err.Error(), `"c2"`) {
			t.Fatalf("err = %v, want a ValidationError naming the open call c2", err)
		}
		sameSnapshot(t, before, snapshot(t, dir))
		// Answering every open call first makes the same node valid.
		mixed.Content.Blocks = append(mixed.Content.Blocks, transcript.Block{Type: transcript.BlockToolResult, ToolCallID: "c2", Text: "ok"})
		mustAppend(t, dir, store.AppendOptions{}, mixed, tool("t3", "c3"))
	})
}
