package chatgpt_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/format/chatgpt"
	"github.com/ctxfold/ctxfold/internal/importtest"
	"github.com/ctxfold/ctxfold/transcript"
)

const dir = "../../fixtures/import/chatgpt/"

func TestConversations(t *testing.T) {
	var tg importtest.Target
	if err := chatgpt.Import(context.Background(), []string{dir + "conversations.json"}, chatgpt.Options{}, &tg); err != nil {
		t.Fatal(err)
	}
	if len(tg.Convs) != 2 {
		t.Fatalf("%d conversations", len(tg.Convs))
	}
	c := tg.Convs[0]
	// 7 messages (the root placeholder has none); u1 has two answers.
	want := importtest.Stats{Nodes: 7, User: 2, System: 1, Assistant: 3, Tool: 1, Calls: 1, Results: 1}
	if got := importtest.StatsOf(c.Nodes); got != want {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
	children := map[string]int{}
	for _, n := range c.Nodes {
		children[n.Predecessor]++
	}
	if children["u1"] != 2 || c.Head != "u2" || c.Model != "gpt-4o" || c.Name != "conv-primes-0001" {
		t.Errorf("branch %d, head %q, model %q, name %q", children["u1"], c.Head, c.Model, c.Name)
	}
	if c.Nodes[0].ID != "sys" || c.Nodes[0].Predecessor != "" {
		t.Errorf("the placeholder root is skipped, its child is the root: %+v", c.Nodes[0])
	}
	// The id is passed as is; the registry sanitizes it for the directory.
	if tg.Convs[1].Name != "../../escape/../x" || tg.Convs[1].Head != "x2" {
		t.Errorf("second conversation %q head %q", tg.Convs[1].Name, tg.Convs[1].Head)
	}
}

func TestMalformed(t *testing.T) {
	var tg importtest.Target
	err := chatgpt.Import(context.Background(), []string{dir + "malformed.json"}, chatgpt.Options{}, &tg)
	var pe *transcript.ParseError
	if !errors.As(err, &pe) || pe.Line != 6 || !strings.Contains(pe.Msg, `"mapping"`) {
		t.Fatalf("err %v", err)
	}
	err = chatgpt.Import(context.Background(), []string{dir + "conversations.json"}, chatgpt.Options{MaxLineBytes: 512}, &importtest.Target{})
	if !errors.As(err, &pe) || pe.Line != 2 || !strings.Contains(pe.Msg, "512-byte limit") {
		t.Fatalf("limit: err %v", err)
	}
}

func FuzzImport(f *testing.F) {
	importtest.Fuzz(f, dir, []string{"conversations.json", "malformed.json"}, "conversations.json", chatgpt.Import)
}

func ExampleImport() {
	var tg importtest.Target
	if err := chatgpt.Import(context.Background(), []string{dir + "conversations.json"}, chatgpt.Options{}, &tg); err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range tg.Convs[0].Nodes {
		fmt.Printf("%s %s after %q\n", n.ID, n.Role, n.Predecessor)
	}
	fmt.Println("HEAD", tg.Convs[0].Head)
	// Output:
	// sys system after ""
	// u1 user after "sys"
	// a1 assistant after "u1"
	// t1 tool after "a1"
	// a2 assistant after "t1"
	// u2 user after "a2"
	// a1b assistant after "u1"
	// HEAD u2
}
