package gemini_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/format/gemini"
	"github.com/ctxfold/ctxfold/internal/importtest"
	"github.com/ctxfold/ctxfold/transcript"
)

const dir = "../../fixtures/import/gemini/"

func load(t *testing.T, file string, opts gemini.Options) (*importtest.Conv, error) {
	t.Helper()
	var tg importtest.Target
	err := gemini.Import(context.Background(), []string{file}, opts, &tg)
	if len(tg.Convs) == 0 {
		return nil, err
	}
	return tg.Convs[0], err
}

func ids(nodes []transcript.Node) string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.ID)
	}
	return strings.Join(out, " ")
}

func TestRewindAndRepeatedID(t *testing.T) {
	c, err := load(t, dir+"session-rewind.jsonl", gemini.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// a1 is recorded twice (call pending, then answered): one node with the
	// later record's result. u2/a3 are rewound: kept, off HEAD's spine.
	if got := ids(c.Nodes); got != "u1 a1 a1.r1 a2 u2 a3 u3 a4" {
		t.Fatalf("nodes %s", got)
	}
	byID := map[string]transcript.Node{}
	for _, n := range c.Nodes {
		byID[n.ID] = n
	}
	if byID["u3"].Predecessor != "a2" || byID["u2"].Predecessor != "a2" || c.Head != "a4" {
		t.Errorf("rewind: u3 follows %q, u2 follows %q, head %q", byID["u3"].Predecessor, byID["u2"].Predecessor, c.Head)
	}
	if string(byID["a3"].Metadata["gemini_rewound"]) != "true" || byID["a4"].Metadata["gemini_rewound"] != nil {
		t.Errorf("rewound flags wrong")
	}
	if r := byID["a1.r1"]; r.ToolCallID != "read-1" || !strings.Contains(r.Content.Text, "ship v2 on Friday") {
		t.Errorf("tool result %+v", r)
	}
	if u := byID["a1"].Usage; u == nil || u.InputTokens != 900 {
		t.Errorf("usage of the replacing record not kept: %+v", u)
	}
	if c.Counts[[2]string{"message/gemini", transcript.OutcomeMerged}] != 1 || c.Counts[[2]string{"message/info", transcript.OutcomeSkipped}] != 1 {
		t.Errorf("counts %v", c.Counts)
	}
	if c.Model != "gemini-2.5-flash" || c.Name != "gem-fixture-0001" {
		t.Errorf("model %q name %q", c.Model, c.Name)
	}
}

func TestLegacy(t *testing.T) {
	c, err := load(t, dir+"legacy.json", gemini.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := importtest.Stats{Nodes: 5, User: 1, Assistant: 2, Tool: 2, Calls: 2, Results: 2}
	if got := importtest.StatsOf(c.Nodes); got != want {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
	if string(c.Nodes[3].Metadata["is_error"]) != "true" || c.Nodes[3].Content.Text != "permission denied" {
		t.Errorf("failed call result %+v", c.Nodes[3])
	}
}

func TestMalformed(t *testing.T) {
	_, err := load(t, dir+"malformed.jsonl", gemini.Options{})
	var pe *transcript.ParseError
	if !errors.As(err, &pe) || pe.Line != 3 {
		t.Fatalf("err %v", err)
	}
	_, err = load(t, dir+"legacy.json", gemini.Options{MaxLineBytes: 200})
	if !errors.As(err, &pe) || !strings.Contains(pe.Msg, "200-byte limit") {
		t.Fatalf("limit: err %v", err)
	}
}

func FuzzImport(f *testing.F) {
	importtest.Fuzz(f, "../../", []string{dir[6:] + "session-rewind.jsonl", dir[6:] + "legacy.json", dir[6:] + "malformed.jsonl",
		dir[6:] + "checkpoint-demo.json", dir[6:] + "checkpoint-old.json",
		// Real Gemini CLI 0.61.0 files: tool calls answered by user
		// functionResponse messages, a resume's rewritten list, a compression.
		interop[6:] + "resume-tool/chats/session-2026-01-01T00-00-00000001.jsonl",
		interop[6:] + "compression/chats/session-2026-01-01T00-00-00000001.jsonl"}, "session.jsonl", gemini.Import)
}

func ExampleImport() {
	var tg importtest.Target
	if err := gemini.Import(context.Background(), []string{dir + "session-rewind.jsonl"}, gemini.Options{}, &tg); err != nil {
		fmt.Println(err)
		return
	}
	c := tg.Convs[0]
	for _, n := range c.Nodes {
		fmt.Printf("%s %s after %q\n", n.ID, n.Role, n.Predecessor)
	}
	fmt.Println("HEAD", c.Head)
	// Output:
	// u1 user after ""
	// a1 assistant after "u1"
	// a1.r1 tool after "a1"
	// a2 assistant after "a1.r1"
	// u2 user after "a2"
	// a3 assistant after "u2"
	// u3 user after "a2"
	// a4 assistant after "u3"
	// HEAD a4
}

func TestSetMessagesAndUnknownRewind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(path, []byte(`{"sessionId":"s","startTime":"t"}
{"id":"a","type":"user","content":"first"}
{"id":"b","type":"gemini","content":"reply"}
{"$set":{"messages":[{"id":"a","type":"user","content":"first, compressed"},{"id":"c","type":"gemini","content":"summary reply"}]}}
{"id":"d","type":"user","content":"next"}
{"$rewindTo":"no-such-id"}
{"id":"e","type":"user","content":"fresh start"}
`), 0o644)
	c, err := load(t, path, gemini.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// $set of messages starts the list over (the old one stays as a
	// branch, the reused id gets a suffix); an unknown rewind target
	// clears the history, as Gemini CLI does.
	var got []string
	for _, n := range c.Nodes {
		got = append(got, n.ID+"<"+n.Predecessor)
	}
	if strings.Join(got, " ") != "a< b<a a~2< c<a~2 d<c e<" || c.Head != "e" {
		t.Fatalf("nodes %v head %q", got, c.Head)
	}
}

func TestDerivedIDCollision(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(path, []byte(`{"sessionId":"s","startTime":"t"}
{"id":"x.r1","type":"user","content":"hi"}
{"id":"x","type":"gemini","content":"","toolCalls":[{"id":"c1","name":"ls","args":{},"status":"success","result":[{"functionResponse":{"id":"c1","name":"ls","response":{"output":"a"}}}]}]}
`), 0o644)
	c, err := load(t, path, gemini.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ids(c.Nodes) != "x.r1 x x.r1~" {
		t.Fatalf("nodes %s", ids(c.Nodes))
	}
}
