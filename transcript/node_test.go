package transcript_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/transcript"
)

// A line written by a newer ctxfold (or a foreign tool) carries fields this
// version does not know at every level: node, content block, tool call,
// usage. They must survive decode → encode.
const futureLine = `{"id":"a1","predecessor":"u1","role":"assistant",` +
	`"content":[{"type":"thinking","text":"hmm","signature":"sig","x_budget":12},` +
	`{"type":"text","text":"hi","citations":[{"url":"https://e.x"}]},` +
	`{"type":"tool_call","id":"c1","name":"bash","arguments":{"cmd":"ls"},"x_cache":true},` +
	`{"type":"x_audio","source":"blob:1","x_seconds":3}],` +
	`"tool_calls":[{"id":"c2","name":"sql","arguments":"{\"q\":1}","x_type":"function"}],` +
	`"created_at":"2026-11-03T08:00:00Z",` +
	`"usage":{"input_tokens":10,"output_tokens":5,"cached_input_tokens":2,"x_reasoning_tokens":7},` +
	`"metadata":{"k":[1,2],"nested":{"a":null}},` +
	`"x_future":{"deep":[true]},"x_score":0.5}`

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
	if !jsonEqual(t, []byte(futureLine), out) {
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

// The same fields survive the store: appended through Tx, read back with
// Session.Node and RawLine.
func TestStoreKeepsUnknownFields(t *testing.T) {
	dir := newSession(t)
	mustAppend(t, dir, transcript.AppendOptions{}, user("u1", "", "hello"))
	var n transcript.Node
	if err := json.Unmarshal([]byte(futureLine), &n); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, dir, transcript.AppendOptions{}, n)
	s := mustOpen(t, dir)
	i, ok := s.Lookup("a1")
	if !ok {
		t.Fatal("a1 missing")
	}
	raw, err := s.RawLine(i)
	if err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(t, []byte(futureLine), raw) {
		t.Fatalf("stored line differs:\nin:     %s\nstored: %s", futureLine, raw)
	}
}

// session.json fields unknown to this version survive every meta rewrite
// (append, checkout, UpdateMeta).
func TestMetaKeepsUnknownFields(t *testing.T) {
	dir := newSession(t)
	path := filepath.Join(dir, transcript.MetaFile)
	data, _ := os.ReadFile(path)
	data = bytes.Replace(data, []byte(`"format_version": 1,`), []byte(`"format_version": 1, "x_owner": {"team": "infra"},`), 1)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, dir, transcript.AppendOptions{}, user("u1", "", "a"), asst("a1", "", "b"))
	if _, err := transcript.Update(t.Context(), dir, testWrite, func(tx *transcript.Tx) error {
		if err := tx.SetHead("u1"); err != nil {
			return err
		}
		return tx.UpdateMeta(func(m *transcript.Meta) { m.Model = "other" })
	}); err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, dir)
	if got := s.Meta.Extra["x_owner"]; got == nil || !jsonEqual(t, got, []byte(`{"team":"infra"}`)) {
		t.Fatalf("x_owner = %q", got)
	}
	if s.Meta.Head != "u1" || s.Meta.Model != "other" {
		t.Fatalf("meta = %+v", s.Meta)
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
	if !errorsAs(err, &pe) || pe.Line != 4 || pe.File != "batch.jsonl" {
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

// Stored lines keep "<", ">" and "&" as they are (no HTML escaping), at
// every level.
func TestStoreDoesNotEscapeHTML(t *testing.T) {
	dir := newSession(t)
	n := user("u1", "", "a <b> & c")
	n.SetMeta("note", "x<y")
	mustAppend(t, dir, transcript.AppendOptions{}, n)
	data, _ := os.ReadFile(filepath.Join(dir, transcript.NodesFile))
	if want := `{"id":"u1","predecessor":null,"role":"user","content":"a <b> & c","metadata":{"note":"x<y"}}` + "\n"; string(data) != want {
		t.Fatalf("stored %s", data)
	}
}
