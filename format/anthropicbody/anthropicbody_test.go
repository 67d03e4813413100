package anthropicbody_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/format/anthropicbody"
	"github.com/ctxfold/ctxfold/internal/importtest"
	"github.com/ctxfold/ctxfold/transcript"
)

const dir = "../../fixtures/import/anthropic/"

func TestBody(t *testing.T) {
	var tg importtest.Target
	if err := anthropicbody.Import(context.Background(), []string{dir + "body.json"}, anthropicbody.Options{}, &tg); err != nil {
		t.Fatal(err)
	}
	c := tg.Convs[0]
	// system + 5 messages; one tool_use answered by a tool_result block.
	want := importtest.Stats{Nodes: 6, System: 1, User: 3, Assistant: 2, Calls: 1, Results: 1}
	if got := importtest.StatsOf(c.Nodes); got != want {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
	th := c.Nodes[2].Content.Blocks[0]
	if th.Type != transcript.BlockThinking || th.Signature != "sig-abc" {
		t.Errorf("thinking %+v", th)
	}
	img := c.Nodes[5].Content.Blocks[0]
	if img.Type != transcript.BlockImage || !strings.HasPrefix(img.Source, "sha256:") || strings.Contains(string(img.Extra["bytes"]), "iVBOR") {
		t.Errorf("image %+v", img)
	}
	if c.Model != "claude-sonnet-4-5" || c.Counts[[2]string{"body/max_tokens", transcript.OutcomeSkipped}] != 1 {
		t.Errorf("model %q counts %v", c.Model, c.Counts)
	}
}

func TestMalformed(t *testing.T) {
	err := anthropicbody.Import(context.Background(), []string{dir + "malformed.json"}, anthropicbody.Options{}, &importtest.Target{})
	var pe *transcript.ParseError
	if !errors.As(err, &pe) || pe.Line != 15 || !strings.Contains(pe.Msg, "toolu_99") {
		t.Fatalf("err %v", err)
	}
}

func FuzzImport(f *testing.F) {
	importtest.Fuzz(f, dir, []string{"body.json", "malformed.json"}, "body.json", anthropicbody.Import)
}

func ExampleImport() {
	var tg importtest.Target
	if err := anthropicbody.Import(context.Background(), []string{dir + "body.json"}, anthropicbody.Options{}, &tg); err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range tg.Convs[0].Nodes {
		fmt.Println(n.ID, n.Role, len(n.AllToolCalls()), len(n.ToolResults()))
	}
	// Output:
	// system-a0c296fe system 0 0
	// m1-fb12a70d user 0 0
	// m2-cb5b7f8c assistant 1 0
	// m3-2c7f79f4 user 0 1
	// m4-85135bea assistant 0 0
	// m5-25c61a73 user 0 0
}
