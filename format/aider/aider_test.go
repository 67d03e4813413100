package aider_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/format/aider"
	"github.com/ctxfold/ctxfold/internal/importtest"
	"github.com/ctxfold/ctxfold/transcript"
)

const dir = "testdata/"

func TestSessions(t *testing.T) {
	var tg importtest.Target
	if err := aider.Import(context.Background(), []string{dir + ".aider.chat.history.md"}, aider.Options{}, &tg); err != nil {
		t.Fatal(err)
	}
	// Three headers; the second session is a start-and-quit, not a conversation.
	if len(tg.Convs) != 2 {
		t.Fatalf("%d conversations", len(tg.Convs))
	}
	c := tg.Convs[0]
	if c.Name != "aider-2024-08-05T19-33-02" || c.Model != "gpt-4o-2024-05-13" {
		t.Errorf("name %q model %q", c.Name, c.Model)
	}
	want := importtest.Stats{Nodes: 5, User: 3, Assistant: 2}
	if got := importtest.StatsOf(c.Nodes); got != want {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
	u1, a1, u2, a2 := c.Nodes[0], c.Nodes[1], c.Nodes[2], c.Nodes[4]
	if got := u1.Content.PlainText(); got != "add a --verbose flag to cli.py\nand print each file as it is read" {
		t.Errorf("multi-line input %q", got)
	}
	if !strings.Contains(string(u1.Metadata["aider_tool_output_before"]), "Main model: gpt-4o-2024-05-13") || !strings.Contains(string(u1.Metadata["aider_chat_started"]), "2024-08-05 19:33:02") {
		t.Errorf("banner metadata %v", u1.Metadata)
	}
	if !strings.HasPrefix(a1.Content.PlainText(), "To add the flag") || !strings.HasSuffix(a1.Content.PlainText(), ">>>>>>> REPLACE\n```") {
		t.Errorf("assistant text %q", a1.Content.PlainText())
	}
	// 1.5k is aider's rounding: approximate, and marked so.
	if a1.Usage == nil || a1.Usage.InputTokens != 1500 || a1.Usage.OutputTokens != 312 || string(a1.Usage.Extra["aider_rounded"]) != "true" {
		t.Errorf("usage %+v", a1.Usage)
	}
	if !strings.Contains(string(a1.Metadata["aider_tool_output"]), "Applied edit to cli.py") {
		t.Errorf("tool output not kept: %v", a1.Metadata)
	}
	if !strings.Contains(string(u2.Metadata["aider_tool_output"]), "F401") {
		t.Errorf("/run output not kept on its turn: %v", u2.Metadata)
	}
	if !strings.HasPrefix(a2.Content.PlainText(), "# Fix\n") || a2.Usage == nil || a2.Usage.InputTokens != 1904 || a2.Usage.Extra["aider_rounded"] != nil {
		t.Errorf("second reply %q usage %+v", a2.Content.PlainText(), a2.Usage)
	}
	for i := 1; i < len(c.Nodes); i++ {
		if c.Nodes[i].Predecessor != c.Nodes[i-1].ID {
			t.Errorf("node %d does not follow the one before", i)
		}
	}

	c = tg.Convs[1]
	if c.Model != "claude-3-5-sonnet-20240620" || len(c.Nodes) != 3 {
		t.Fatalf("third session: model %q, %d nodes", c.Model, len(c.Nodes))
	}
	u := c.Nodes[1].Usage
	if u == nil || u.InputTokens != 12000 || u.CachedInputTokens != 9500 || u.OutputTokens != 845 || string(u.Extra["cache_write_tokens"]) != "2000" {
		t.Errorf("cache usage %+v", u)
	}
	if c.Nodes[0].ID != "s3-1" || c.Nodes[2].Content.PlainText() != "<blank>" {
		t.Errorf("ids follow the session number: %q; blank input %q", c.Nodes[0].ID, c.Nodes[2].Content.PlainText())
	}
	// Every record is counted: the skipped session and its banner lines too.
	counts := map[[2]string]int{}
	for _, cv := range tg.Convs {
		for k, v := range cv.Counts {
			counts[k] += v
		}
	}
	for k, want := range map[[2]string]int{
		{"session", transcript.OutcomeImported}: 2, {"session", transcript.OutcomeSkipped}: 1,
		{"user", transcript.OutcomeImported}: 5, {"assistant", transcript.OutcomeImported}: 3,
		{"tool output/tokens", transcript.OutcomeMerged}: 3,
		{"tool output", transcript.OutcomeSkipped}:       2,
		{"tool output", transcript.OutcomeMerged}:        7 + 2 + 2 + 1 + 3,
	} {
		if counts[k] != want {
			t.Errorf("count %v = %d, want %d", k, counts[k], want)
		}
	}
}

func TestSessionFlag(t *testing.T) {
	var tg importtest.Target
	if err := aider.Import(context.Background(), []string{dir + ".aider.chat.history.md"}, aider.Options{Session: 3}, &tg); err != nil {
		t.Fatal(err)
	}
	if len(tg.Convs) != 1 || tg.Convs[0].Name != "aider-2024-08-06T09-02-47" {
		t.Fatalf("--session 3: %d conversations", len(tg.Convs))
	}
	err := aider.Import(context.Background(), []string{dir + ".aider.chat.history.md"}, aider.Options{Session: 4}, &importtest.Target{})
	var pe *transcript.ParseError
	if !errors.As(err, &pe) || !strings.Contains(pe.Msg, "holds 3 session(s)") {
		t.Errorf("--session 4: %v", err)
	}
}

func TestDetect(t *testing.T) {
	full, _ := os.ReadFile(dir + ".aider.chat.history.md")
	bare, _ := os.ReadFile(dir + "no-header.md")
	if !aider.Detect(full) || aider.Near(full) != "" {
		t.Error("the chat history is not detected")
	}
	if aider.Detect(bare) || !strings.Contains(aider.Near(bare), "--from aider") {
		t.Errorf("no header: detect %v, near %q", aider.Detect(bare), aider.Near(bare))
	}
	if aider.Detect([]byte("# A README\n\ntext\n")) || aider.Near([]byte("# A README\n")) != "" {
		t.Error("plain Markdown taken for aider")
	}
	var tg importtest.Target
	if err := aider.Import(context.Background(), []string{dir + "no-header.md"}, aider.Options{}, &tg); err != nil {
		t.Fatal(err)
	}
	if len(tg.Convs) != 1 || importtest.StatsOf(tg.Convs[0].Nodes) != (importtest.Stats{Nodes: 2, User: 1, Assistant: 1}) {
		t.Fatalf("no header: %+v", tg.Convs)
	}
	empty := t.TempDir() + "/h.md"
	os.WriteFile(empty, []byte("\n# aider chat started at 2024-01-01 00:00:00\n\n> Aider v0.1  \n"), 0o644)
	err := aider.Import(context.Background(), []string{empty}, aider.Options{}, &importtest.Target{})
	var pe *transcript.ParseError
	if !errors.As(err, &pe) || !strings.Contains(pe.Msg, "no chat message") {
		t.Errorf("banner only: %v", err)
	}
}

func FuzzImport(f *testing.F) {
	importtest.Fuzz(f, dir, []string{".aider.chat.history.md", "no-header.md"}, ".aider.chat.history.md", aider.Import)
}

// aider's tool_output prefixes only the first line of a multi-line message
// (a /show-repo map): the rest is tool output too, not an assistant turn;
// a reply after tool output always follows a blank line.
func TestMultiLineToolOutput(t *testing.T) {
	path := t.TempDir() + "/h.md"
	os.WriteFile(path, []byte("\n# aider chat started at 2024-08-05 20:40:10\n\n"+
		"> Models: claude-3-5-sonnet-20240620 with diff edit format, weak model claude-3-haiku-20240307  \n"+
		"> Here are summaries of some files present in my git repository.\nDo not propose changes to these files.\n\nLICENSE.txt\n\naider/args.py:\n⋮...\n"+
		"\n#### hi  \n> https://example.com/x  \n\nHello! What shall we change?\n\n> Tokens: 5,244 sent, 604 received. Cost: $0.02 request, $0.02 session.  \n"), 0o644)
	var tg importtest.Target
	if err := aider.Import(context.Background(), []string{path}, aider.Options{}, &tg); err != nil {
		t.Fatal(err)
	}
	c := tg.Convs[0]
	if got := importtest.StatsOf(c.Nodes); got != (importtest.Stats{Nodes: 2, User: 1, Assistant: 1}) {
		t.Fatalf("stats %+v", got)
	}
	if !strings.Contains(string(c.Nodes[0].Metadata["aider_tool_output_before"]), "LICENSE.txt") || c.Model != "claude-3-5-sonnet-20240620" {
		t.Errorf("banner %s, model %q", c.Nodes[0].Metadata["aider_tool_output_before"], c.Model)
	}
	if c.Nodes[1].Content.PlainText() != "Hello! What shall we change?" || c.Nodes[1].Usage == nil || c.Nodes[1].Usage.InputTokens != 5244 {
		t.Errorf("reply %q usage %+v", c.Nodes[1].Content.PlainText(), c.Nodes[1].Usage)
	}
}
