package transcript_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/transcript"
)

// A line written by a newer ctxfold (or a foreign tool) carries fields this
// version does not know at every level: node, content block, tool call,
// usage. They must survive decode → encode.
// testdata/future-line.json holds one (the store's tests read it too).
var futureLine = readFutureLine("../transcript/testdata/future-line.json")

func TestNodeRoundTripKeepsUnknownFields(t *testing.T) {
	var n transcript.Node
	if err := json.Unmarshal([]byte(futureLine), &n); err != nil {
		t.Fatal(err)
	}
	if n.Extra["x_future"] == nil || n.Usage.Extra["x_reasoning_tokens"] == nil ||
		n.Content.Blocks[0].Extra["x_budget"] == nil || n.ToolCalls[0].Extra["x_type"] == nil {
		t.Fatalf("unknown fields not kept: %+v", n)
	}
	out, err := json.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	var in, got any
	if json.Unmarshal([]byte(futureLine), &in) != nil || json.Unmarshal(out, &got) != nil || !reflect.DeepEqual(in, got) {
		t.Fatalf("round trip changed the node:\nin:  %s\nout: %s", futureLine, out)
	}
	// Encoding is deterministic: a second round trip gives the same bytes.
	var again transcript.Node
	if err := json.Unmarshal(out, &again); err != nil {
		t.Fatal(err)
	}
	out2, _ := json.Marshal(again)
	if !bytes.Equal(out, out2) {
		t.Fatalf("encoding not stable:\n%s\n%s", out, out2)
	}
}

func TestContentForms(t *testing.T) {
	for _, tc := range []struct{ in, plain string }{
		{`"plain"`, "plain"},
		{`[{"type":"text","text":"a"},{"type":"thinking","text":"t"},{"type":"text","text":"b"}]`, "a\nb"},
		{`[]`, ""},
	} {
		var c transcript.Content
		if err := json.Unmarshal([]byte(tc.in), &c); err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if c.PlainText() != tc.plain {
			t.Errorf("%s: PlainText = %q, want %q", tc.in, c.PlainText(), tc.plain)
		}
		out, _ := json.Marshal(c)
		if string(out) != tc.in {
			t.Errorf("%s: re-encoded as %s", tc.in, out)
		}
	}
	var c transcript.Content
	if err := json.Unmarshal([]byte(`{"a":1}`), &c); err == nil {
		t.Error("object content accepted")
	}
}

func TestNodeDecodeErrors(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{`{"id":"x","role":"llm"}`, `"role" must be system, user, assistant or tool, got "llm"`},
		{`{"id":"","role":"user"}`, `"id" must be a non-empty string`},
		{`{"id":7,"role":"user"}`, `"id" must be a non-empty string`},
		{`{"id":"x","predecessor":3,"role":"user"}`, `"predecessor" must be a non-empty string or null`},
		{`{"id":"x","role":"user","content":5}`, `content: expected a string or an array of blocks`},
		{`{"id":"x","role":"user","content":[{"text":"no type"}]}`, `missing "type"`},
		{`{"id":"x","role":"assistant","tool_calls":{}}`, `"tool_calls" must be an array`},
		{`{"id":"x","role":"assistant","usage":{"input_tokens":"many"}}`, `usage: input_tokens: expected an integer`},
		{`{"id":"x","role":"user","metadata":[]}`, `"metadata" must be an object`},
		{`[1,2]`, `expected a JSON object, got an array`},
		{`{"id":"x",`, `expected a JSON object: unexpected end of JSON input`},
	} {
		var n transcript.Node
		err := n.UnmarshalJSON([]byte(tc.line))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.line, err, tc.want)
		}
	}
}

func TestReadNodesNamesLine(t *testing.T) {
	in := "{\"role\":\"user\",\"content\":\"a\"}\n\n{\"role\":\"user\",\"content\":\"b\"}\n{\"role\":\"user\",\"content\":\n"
	_, err := transcript.ReadNodes(strings.NewReader(in), "batch.jsonl", 0)
	var pe *transcript.ParseError
	if !errors.As(err, &pe) || pe.Line != 4 || pe.File != "batch.jsonl" {
		t.Fatalf("err = %v, want a ParseError at batch.jsonl:4", err)
	}
	nodes, err := transcript.ReadNodes(strings.NewReader(in[:strings.LastIndex(in, "{")]), "b", 0)
	if err != nil || len(nodes) != 2 {
		t.Fatalf("nodes=%d err=%v", len(nodes), err)
	}
	if _, err := transcript.ReadNodes(strings.NewReader(strings.Repeat("x", 100)+"\n"), "b", 10); err == nil || !strings.Contains(err.Error(), "b:1: line is longer") {
		t.Fatalf("long line: %v", err)
	}
	if _, err := transcript.ReadNodes(strings.NewReader("{\"role\":\"user\",\"content\":\"\xff\"}\n"), "b", 0); err == nil || !strings.Contains(err.Error(), "b:1: invalid UTF-8") {
		t.Fatalf("bad utf-8: %v", err)
	}
}

func readFutureLine(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	return strings.TrimSuffix(string(data), "\n")
}
