package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkLine fails unless AppendLine writes exactly the reference's bytes
// (json.Compact over Node.MarshalJSON), or fails where it fails.
func checkLine(t *testing.T, n *Node) {
	t.Helper()
	want, wantErr := appendLineReference([]byte("prefix"), n)
	got, gotErr := AppendLine([]byte("prefix"), n)
	if (gotErr != nil) != (wantErr != nil) {
		t.Fatalf("node %#v: AppendLine error %v, reference error %v", n, gotErr, wantErr)
	}
	if gotErr != nil {
		if gotErr.Error() != wantErr.Error() {
			t.Fatalf("node %#v: AppendLine error %q, reference %q", n, gotErr, wantErr)
		}
		return
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("node %#v:\n got %s\nwant %s", n, got, want)
	}
	if _, ok := appendNodeFast(nil, n); !ok && ValidJSON(bytes.TrimPrefix(want, []byte("prefix"))) && fastShouldServe(n) {
		t.Fatalf("node %#v: the fast encoder refused a node it should encode", n)
	}
}

// fastShouldServe: every raw value of n is valid JSON on its own (the only
// case the fast path hands to the reference).
func fastShouldServe(n *Node) bool {
	raws := [][]byte{}
	add := func(m map[string]json.RawMessage) {
		for _, v := range m {
			raws = append(raws, v)
		}
	}
	add(n.Metadata)
	add(n.Extra)
	for _, b := range n.Content.Blocks {
		if len(b.Arguments) > 0 {
			raws = append(raws, b.Arguments)
		}
		add(b.Extra)
	}
	for _, c := range n.ToolCalls {
		if len(c.Arguments) > 0 {
			raws = append(raws, c.Arguments)
		}
		add(c.Extra)
	}
	if n.Usage != nil {
		add(n.Usage.Extra)
	}
	for _, r := range raws {
		if !ValidJSON(r) {
			return false
		}
	}
	return true
}

func TestAppendLineMatchesReference(t *testing.T) {
	odd := "a<b>&c \"q\" \\ \b\f\n\r\t\x00\x1f\x7f é 日本 \u2028\u2029 \xff\xe2\x80 end"
	nodes := []Node{
		{ID: "u1", Role: RoleUser, Content: TextContent("hello")},
		{Role: RoleUser, Content: TextContent(odd)},
		{ID: odd, Predecessor: odd, Role: Role(odd), Content: TextContent(""), ToolCallID: odd, Name: odd, Caller: odd, CreatedAt: odd},
		{ID: "a", Role: RoleAssistant, Content: Content{IsBlocks: true}},
		{ID: "a", Role: RoleAssistant, Content: Content{IsBlocks: true, Blocks: []Block{}}},
		{ID: "a", Predecessor: "u", Role: RoleAssistant, Content: Content{IsBlocks: true, Blocks: []Block{
			{Type: BlockText, Text: odd},
			{Type: BlockThinking, Text: odd, Signature: odd},
			{Type: BlockImage, Source: "sha256:ab<>", MediaType: "image/png", Extra: map[string]json.RawMessage{"bytes": json.RawMessage(" 12 "), "z<": json.RawMessage(`{"x" : "<\u2028>"}`)}},
			{Type: BlockToolCall, ID: "c1", Name: "Bash", Arguments: json.RawMessage(" {\n \"cmd\" : \"ls <a> & \\\"b\\\" \u2028\u2029\" , \"n\" : [1, 2.5e3, true, null] } ")},
			{Type: BlockToolResult, ToolCallID: "c1", Text: odd, IsError: true},
		}},
			ToolCalls: []ToolCall{{ID: "t<1>", Name: "n&", Arguments: json.RawMessage(`"{\"a\": \"<b>\"}"`), Extra: map[string]json.RawMessage{"namespace": json.RawMessage(` "x<y" `)}}, {}},
			Usage:     &Usage{InputTokens: 10, OutputTokens: -3, CachedInputTokens: 7, Extra: map[string]json.RawMessage{"context_window": json.RawMessage(`200000`), "a": json.RawMessage(`{"b" : [ ]}`)}},
			Metadata:  map[string]json.RawMessage{"z": json.RawMessage(`"<&>"`), "a": json.RawMessage(" [ 1 , 2 ] "), "m<": json.RawMessage(`{}`)},
			Extra:     map[string]json.RawMessage{"zz": json.RawMessage(`"x <y>"`), "aa": json.RawMessage("\t1\n"), "id": json.RawMessage(`"dup"`)},
		},
		{ID: "u", Role: RoleUser, Usage: &Usage{}},
		// Raw values the fast path hands to the reference: the bytes (or
		// the error) must still be the reference's.
		{ID: "bad1", Role: RoleUser, Metadata: map[string]json.RawMessage{"a": json.RawMessage(``)}},
		{ID: "bad2", Role: RoleUser, Extra: map[string]json.RawMessage{"a": json.RawMessage(`1,"b":2`)}},
		{ID: "bad3", Role: RoleAssistant, Content: Content{IsBlocks: true, Blocks: []Block{{Type: "tool_call", Arguments: json.RawMessage(`{"a":`)}}}},
		{ID: "bad4", Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "x", Arguments: json.RawMessage(`nul`)}}},
		{ID: "bad5", Role: RoleAssistant, Content: Content{IsBlocks: true, Blocks: []Block{{Type: "x", Extra: map[string]json.RawMessage{"k": json.RawMessage(`1 2`)}}}}},
		{ID: "odd-raw", Role: RoleUser, Metadata: map[string]json.RawMessage{"a": json.RawMessage("\"\xff\xfe\"")}},
	}
	for i := range nodes {
		checkLine(t, &nodes[i])
	}
}

// TestAppendLineOnStoredLines re-encodes every node line of the
// repository's session fixtures (nodes.jsonl files, JSONL under testdata)
// both ways.
func TestAppendLineOnStoredLines(t *testing.T) {
	lines := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || strings.HasPrefix(d.Name(), "_")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".jsonl") || !(d.Name() == "nodes.jsonl" || strings.Contains(path, "testdata")) {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var n Node
			if json.Unmarshal(sc.Bytes(), &n) != nil {
				continue
			}
			lines++
			checkLine(t, &n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if lines < 500 {
		t.Fatalf("only %d node lines found under testdata; expected the session fixtures", lines)
	}
	t.Logf("%d lines", lines)
}

func FuzzAppendLine(f *testing.F) {
	f.Add("hello", "<a>&\u2028", `{"a" : 1}`, `"x"`, " 1 ", true, true)
	f.Add("\xff\x00\x1f\\\"", "", ``, `1,"b":2`, `[`, false, false)
	f.Add("日本", "\u2029", `{"k":"\u003c"}`, `null`, `{}`, true, false)
	f.Fuzz(func(t *testing.T, text, key, rawA, rawB, rawC string, blocks, usage bool) {
		n := Node{ID: key, Predecessor: text, Role: RoleAssistant, Content: TextContent(text), Name: key,
			Metadata: map[string]json.RawMessage{key: json.RawMessage(rawA), "k2": json.RawMessage(rawC)},
			Extra:    map[string]json.RawMessage{"x" + key: json.RawMessage(rawB)}}
		if blocks {
			n.Content = Content{IsBlocks: true, Blocks: []Block{{Type: key, Text: text, Arguments: json.RawMessage(rawA),
				Extra: map[string]json.RawMessage{key: json.RawMessage(rawB)}}, {Type: "text", Text: key}}}
			n.ToolCalls = []ToolCall{{ID: text, Name: key, Arguments: json.RawMessage(rawC)}}
		}
		if usage {
			n.Usage = &Usage{InputTokens: int64(len(text)), Extra: map[string]json.RawMessage{key: json.RawMessage(rawC)}}
		}
		checkLine(t, &n)
	})
}

// TestInvalidUTF8FieldJoinsBlockStrings: a block's strings are judged
// joined (a character split between two of them is valid), other fields
// each alone, and raw values before strings.
func TestInvalidUTF8FieldJoinsBlockStrings(t *testing.T) {
	split := Node{ID: "a", Content: Content{IsBlocks: true, Blocks: []Block{{Type: "text", Text: "\xe6\x97", Signature: "\xa5"}}}}
	for _, c := range []struct {
		n    Node
		want string
	}{
		{split, ""},
		{Node{ID: "a", Content: Content{IsBlocks: true, Blocks: []Block{{Type: "text", Text: "\xe6\x97"}}}}, "content"},
		{Node{ID: "\xff", Content: Content{IsBlocks: true, Blocks: []Block{{Type: "t", Arguments: json.RawMessage("\"\xff\"")}}}}, "content"},
		{Node{ID: "\xff", ToolCalls: []ToolCall{{ID: "\xe6\x97", Name: "\xa5"}}}, "id"},
		{Node{ID: "a", ToolCalls: []ToolCall{{ID: "\xe6\x97", Name: "\xa5"}}}, ""},
		{Node{ID: "a", ToolCalls: []ToolCall{{ID: "\xe6\x97", Name: "x"}}}, "tool_calls"},
		{Node{ID: "a", Predecessor: "\xe6\x97", Caller: "\xa5"}, "predecessor"},
		{Node{ID: "a", Metadata: map[string]json.RawMessage{"k": json.RawMessage("\"\xff\"")}}, "metadata"},
	} {
		if got := InvalidUTF8Field(&c.n); got != c.want {
			t.Errorf("%#v: InvalidUTF8Field = %q, want %q", c.n, got, c.want)
		}
	}
}
