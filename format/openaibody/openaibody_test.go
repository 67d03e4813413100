package openaibody_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/format/openaibody"
	"github.com/ctxfold/ctxfold/internal/importtest"
	"github.com/ctxfold/ctxfold/transcript"
)

const dir = "../../fixtures/import/openai/"

func load(t *testing.T, file string) (*importtest.Conv, error) {
	t.Helper()
	var tg importtest.Target
	err := openaibody.Import(context.Background(), []string{file}, openaibody.Options{}, &tg)
	if len(tg.Convs) == 0 {
		return nil, err
	}
	return tg.Convs[0], err
}

func TestMessagesArray(t *testing.T) {
	c, err := load(t, dir+"messages.json")
	if err != nil {
		t.Fatal(err)
	}
	want := importtest.Stats{Nodes: 5, System: 1, User: 1, Assistant: 2, Tool: 1, Calls: 1, Results: 1}
	if got := importtest.StatsOf(c.Nodes); got != want {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
	img := c.Nodes[1].Content.Blocks[1]
	if img.Type != transcript.BlockImage || !strings.HasPrefix(img.Source, "sha256:") || img.MediaType != "image/png" {
		t.Errorf("inline image not turned into a reference: %+v", img)
	}
	if c.Nodes[3].Name != "get_weather" || c.Nodes[3].ToolCallID != "call_w1" {
		t.Errorf("tool node %+v", c.Nodes[3])
	}
}

func TestBody(t *testing.T) {
	c, err := load(t, dir+"body.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Nodes) != 4 || c.Model != "gpt-4o-mini" || string(c.Nodes[1].Metadata["openai_role"]) != `"developer"` {
		t.Fatalf("nodes %d model %q", len(c.Nodes), c.Model)
	}
	if c.Counts[[2]string{"body/temperature", transcript.OutcomeSkipped}] != 1 {
		t.Errorf("request parameters not counted: %v", c.Counts)
	}
}

func TestMalformed(t *testing.T) {
	_, err := load(t, dir+"malformed.json")
	var pe *transcript.ParseError
	// The fourth message starts on line 35 of the fixture.
	if !errors.As(err, &pe) || pe.Line != 35 || !strings.Contains(pe.Msg, "call_nope") {
		t.Fatalf("err %v", err)
	}
}

func FuzzImport(f *testing.F) {
	importtest.Fuzz(f, dir, []string{"messages.json", "body.json", "malformed.json"}, "messages.json", openaibody.Import)
}

func ExampleImport() {
	var tg importtest.Target
	if err := openaibody.Import(context.Background(), []string{dir + "messages.json"}, openaibody.Options{}, &tg); err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range tg.Convs[0].Nodes {
		fmt.Printf("%s %s %q\n", n.ID, n.Role, n.Content.PlainText())
	}
	// Output:
	// m1-4ed8f1d9 system "You are a helpful assistant."
	// m2-48d1e6a9 user "What's the weather in Paris? Here is a photo."
	// m3-317a7e08 assistant ""
	// m4-bfd565bb tool "{\"temp_c\":18,\"sky\":\"cloudy\"}"
	// m5-d88acdbc assistant "It is 18°C and cloudy in Paris."
}
