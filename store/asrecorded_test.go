package store_test

import (
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// Imported history is taken as recorded: a turn after tool calls the
// export never answered is kept (verify reports it), while the same write
// by hand is refused.
func TestAppendAsRecordedKeepsUnansweredCalls(t *testing.T) {
	dir := newSession(t)
	call := asst("a1", "", "")
	call.ToolCalls = []transcript.ToolCall{{ID: "c1", Name: "bash"}}
	mustAppend(t, dir, store.AppendOptions{}, user("u1", "", "q"), call)
	if _, err := tryAppend(dir, store.AppendOptions{}, user("u2", "a1", "next")); err == nil || !strings.Contains(err.Error(), `tool call(s) "c1" of "a1" have no result yet`) {
		t.Fatalf("a hand-written turn after an unanswered call: %v", err)
	}
	res := mustAppend(t, dir, store.AppendOptions{AsRecorded: true}, user("u2", "a1", "next"))
	if len(res.IDs) != 1 || res.Head != "u2" {
		t.Fatalf("as recorded: %+v", res)
	}
}
