package transcript_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

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
	mustAppend(t, dir, transcript.AppendOptions{}, user("u1", "", "q"), call)
	sub := user("sub1", "", "do the sub task")
	sub.Caller = "a1"
	sub.Predecessor = ""
	mustAppend(t, dir, transcript.AppendOptions{RootFirst: true}, sub, asst("sub2", "sub1", "done"))
	results := transcript.Node{ID: "r", Predecessor: "a1", Role: transcript.RoleUser, Content: transcript.Content{IsBlocks: true, Blocks: []transcript.Block{
		{Type: transcript.BlockToolResult, ToolCallID: "c1", Text: "ok"},
	}}}
	tool := transcript.Node{ID: "t2", Predecessor: "r", Role: transcript.RoleTool, ToolCallID: "c2", Content: transcript.TextContent("rows")}
	mustAppend(t, dir, transcript.AppendOptions{}, results, tool, asst("a2", "", "answer"), user("u2", "", "next"))
}

// TestAppendCanceledWritesNothing: a write whose context is canceled
// before the commit point (Ctrl-C during a long append --file) returns the
// context's error and leaves every file as it was.
func TestAppendCanceledWritesNothing(t *testing.T) {
	dir := newSession(t)
	mustAppend(t, dir, transcript.AppendOptions{}, user("u1", "", "q"))
	before := snapshot(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := transcript.Update(ctx, dir, testWrite, func(tx *transcript.Tx) error {
		cancel() // the interrupt arrives while the batch is being prepared
		_, err := tx.Append([]transcript.Node{asst("a1", "", "long answer"), user("u2", "", "more")}, transcript.AppendOptions{})
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
	mustAppend(t, dir, transcript.AppendOptions{}, user("u1", "", "q"))
	st, err := os.Stat(filepath.Join(dir, transcript.MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Perm(); got != 0o644 {
		t.Fatalf("session.json mode %v, want 0644", got)
	}
}
