package compact

// End-to-end compaction with each model-backed summarizer: the summary it
// returns is stored, a failure writes nothing, the key never leaks.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/summarize"
)

func newOpenAI(t *testing.T, reply func(int, string) (int, string)) (*summarize.OpenAI, *sessiontest.ChatServer) {
	cs := sessiontest.NewChatServer(t, reply)
	return &summarize.OpenAI{BaseURL: cs.URL + "/v1", APIKey: sessiontest.TestKey, Model: "summary-model", Backoff: time.Millisecond, Timeout: 5 * time.Second}, cs
}

func TestOpenAISuccess(t *testing.T) {
	o, cs := newOpenAI(t, func(int, string) (int, string) {
		return 200, sessiontest.Completion("## Objective\nFix TestParseDuration in internal/timeutil/parse_test.go.")
	})
	dir := sessiontest.CopyFixture(t, "tools")
	res, err := Compact(context.Background(), opts(dir, o, 300))
	if err != nil || res.Outcome != OutcomeSucceeded || res.Summarizer != "openai" {
		t.Fatalf("%v %+v", err, res)
	}
	if cs.Calls() != 1 {
		t.Fatalf("%d calls", cs.Calls())
	}
	p := cs.Prompts()[0]
	for _, want := range []string{"## ", "Constraints and user preferences", "verbatim", "call_run1", "internal/timeutil/parse.go", "Turns to summarize"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	if !strings.Contains(sessiontest.StoredNode(t, dir, res.SummaryID).Content.PlainText(), "Fix TestParseDuration") {
		t.Fatal("the model's summary was not stored")
	}
	sessiontest.AssertNoKey(t, dir)
}

func TestOpenAIServerErrorFailsAndKeepsHistory(t *testing.T) {
	o, cs := newOpenAI(t, func(int, string) (int, string) {
		return 500, sessiontest.APIError("internal error; key "+sessiontest.TestKey, "server_error", "")
	})
	o.Retries = 2
	dir := sessiontest.CopyFixture(t, "tools")
	files := snapshotFiles(t, dir)
	res, err := Compact(context.Background(), opts(dir, o, 300))
	var failed *FailedError
	if !errors.As(err, &failed) || res.Outcome != OutcomeFailed {
		t.Fatalf("%v %+v", err, res)
	}
	if cs.Calls() != 3 {
		t.Fatalf("%d calls, want 1 + 2 retries", cs.Calls())
	}
	ev := unchanged(t, dir, files)
	if !strings.Contains(fmt.Sprint(ev["error"]), "500") {
		t.Fatalf("failed event %v", ev)
	}
	sessiontest.AssertNoKey(t, dir, err.Error())
}

// TestCompactWithExec runs the pipeline end to end with a real child
// process: a failing command writes no node.
func TestCompactWithExec(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	files := snapshotFiles(t, dir)
	_, err := Compact(context.Background(), opts(dir, &summarize.Exec{Command: "exit 1"}, 300))
	var failed *FailedError
	if !errors.As(err, &failed) {
		t.Fatalf("%v", err)
	}
	unchanged(t, dir, files)
	res, err := Compact(context.Background(), opts(dir, &summarize.Exec{Command: `cat >/dev/null; echo "## Objective"; echo "fix 90m"`}, 300))
	if err != nil || res.Outcome != OutcomeSucceeded || res.Summarizer != "exec" {
		t.Fatalf("%v %+v", err, res)
	}
}

// TestOpenAISummaryHoldingKeyFails: a summary repeating the key would
// store it in nodes.jsonl for good; it is a failed compaction instead.
func TestOpenAISummaryHoldingKeyFails(t *testing.T) {
	o, _ := newOpenAI(t, func(int, string) (int, string) {
		return 200, sessiontest.Completion("## Objective\nThe request carried " + strings.ToUpper(sessiontest.TestKey))
	})
	dir := sessiontest.CopyFixture(t, "tools")
	files := snapshotFiles(t, dir)
	res, err := Compact(context.Background(), opts(dir, o, 300))
	var failed *FailedError
	if !errors.As(err, &failed) || res.Outcome != OutcomeFailed || !errors.Is(err, summarize.ErrSummaryHoldsKey) {
		t.Fatalf("%v %+v", err, res)
	}
	unchanged(t, dir, files)
	sessiontest.AssertNoKey(t, dir, err.Error())
}

// TestOpenAIErrorEchoingKeyIsRedactedEverywhere: the failure's error, as
// printed and as written to events.jsonl, carries no form of the key.
func TestOpenAIErrorEchoingKeyIsRedactedEverywhere(t *testing.T) {
	o, _ := newOpenAI(t, func(int, string) (int, string) {
		return 401, sessiontest.APIError("bad key "+sessiontest.TestKey[:20]+"… "+strings.ToUpper(sessiontest.TestKey), "invalid_request_error", "invalid_api_key")
	})
	dir := sessiontest.CopyFixture(t, "tools")
	_, err := Compact(context.Background(), opts(dir, o, 300))
	if err == nil {
		t.Fatal("compaction succeeded")
	}
	sessiontest.AssertNoKey(t, dir, err.Error())
}
