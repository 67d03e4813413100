package render_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

var rtWrite = store.WriteOptions{LockTimeout: time.Second, Now: func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }}

// rtRich is one of every kind of node and block, in the native schema.
const rtRich = `{"id":"sys","role":"system","content":"Be brief."}
{"id":"u1","role":"user","content":"List files <please>."}
{"id":"a1","role":"assistant","content":[{"type":"thinking","text":"signed thought","signature":"sig1"},{"type":"thinking","text":"unsigned thought"},{"type":"text","text":"Running two tools."},{"type":"tool_call","id":"c1","name":"bash","arguments":{"cmd": "ls"}}],"tool_calls":[{"id":"c2","name":"sql","arguments":"{\"q\":\"select 1\"}"}],"usage":{"input_tokens":100,"output_tokens":20}}
{"id":"t1","role":"tool","tool_call_id":"c1","content":"a.txt\nb.txt","metadata":{"is_error":true}}
{"id":"u2","role":"user","content":[{"type":"tool_result","tool_call_id":"c2","text":"1"},{"type":"text","text":"Also this image:"},{"type":"image","source":"https://e.x/cat.png","media_type":"image/png"},{"type":"image","source":"sha256:abc","media_type":"image/jpeg"}]}
{"id":"s2","role":"system","content":"Mid-conversation note."}
{"id":"a2","role":"assistant","content":"Done.","tool_calls":[{"id":"c3","name":"noargs"}]}
{"id":"t3","role":"tool","tool_call_id":"c3","content":""}
`

// rtSession creates a session from native JSONL through the store.
func rtSession(t testing.TB, jsonl string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "s")
	if _, err := store.Init(dir, "", rtWrite); err != nil {
		t.Fatal(err)
	}
	nodes, err := transcript.ReadNodes(strings.NewReader(jsonl), "rich.jsonl", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Update(context.Background(), dir, rtWrite, func(tx *store.Tx) error {
		_, err := tx.Append(nodes, store.AppendOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func rtRender(t testing.TB, dir, head string, raw bool, f render.Format) string {
	t.Helper()
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	v, err := render.Build(g, head, raw)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := render.Write(&buf, v, f); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestTextFormat(t *testing.T) {
	got := rtRender(t, rtSession(t, rtRich), "", false, render.FormatText)
	want := `── system · sys
Be brief.

── user · u1
List files <please>.

── assistant · a1
<thinking>
signed thought
</thinking>
<thinking>
unsigned thought
</thinking>
Running two tools.
→ bash {"cmd":"ls"}  (call c1)
→ sql {"q":"select 1"}  (call c2)

── tool · t1 · result of c1
a.txt
b.txt

── user · u2
← result of c2:
1
Also this image:
[image image/png https://e.x/cat.png]
[image image/jpeg sha256:abc]

── system · s2
Mid-conversation note.

── assistant · a2
Done.
→ noargs {}  (call c3)

── tool · t3 · result of c3
`
	if got != want {
		t.Fatalf("text:\n%s\nwant:\n%s", got, want)
	}
}

// OpenAI rules (docs/FORMAT.md): thinking is dropped; tool_call blocks and
// tool_calls become function calls with string arguments; tool_result
// blocks become tool messages before the rest of their node; an image
// with a URL is an image_url part, any other source a text notice; a later
// system node stays a system message.
func TestOpenAIFormat(t *testing.T) {
	got := rtRender(t, rtSession(t, rtRich), "", false, render.FormatOpenAI)
	want := `[
{"role":"system","content":"Be brief."},
{"role":"user","content":"List files <please>."},
{"role":"assistant","content":"Running two tools.","tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{\"cmd\":\"ls\"}"}},{"id":"c2","type":"function","function":{"name":"sql","arguments":"{\"q\":\"select 1\"}"}}]},
{"role":"tool","content":"a.txt\nb.txt","tool_call_id":"c1"},
{"role":"tool","content":"1","tool_call_id":"c2"},
{"role":"user","content":[{"type":"text","text":"Also this image:"},{"type":"image_url","image_url":{"url":"https://e.x/cat.png"}},{"type":"text","text":"[image/jpeg: sha256:abc]"}]},
{"role":"system","content":"Mid-conversation note."},
{"role":"assistant","content":"Done.","tool_calls":[{"id":"c3","type":"function","function":{"name":"noargs","arguments":"{}"}}]},
{"role":"tool","content":"","tool_call_id":"c3"}
]
`
	if got != want {
		t.Fatalf("openai:\n%s\nwant:\n%s", got, want)
	}
	var msgs []map[string]any
	if err := json.Unmarshal([]byte(got), &msgs); err != nil {
		t.Fatalf("not a JSON array: %v", err)
	}
}

// Anthropic rules: leading system nodes form "system"; a later system node
// is a "[system] …" user text block; tool nodes are tool_result blocks in
// user messages (is_error kept); same-role messages merge with
// tool_result blocks first; thinking is sent only when signed; tool_use
// input is always an object.
func TestAnthropicFormat(t *testing.T) {
	got := rtRender(t, rtSession(t, rtRich), "", false, render.FormatAnthropic)
	want := `{
  "system": "Be brief.",
  "messages": [
    {
      "role": "user",
      "content": [
        {
          "type": "text",
          "text": "List files <please>."
        }
      ]
    },
    {
      "role": "assistant",
      "content": [
        {
          "type": "thinking",
          "thinking": "signed thought",
          "signature": "sig1"
        },
        {
          "type": "text",
          "text": "Running two tools."
        },
        {
          "type": "tool_use",
          "id": "c1",
          "name": "bash",
          "input": {
            "cmd": "ls"
          }
        },
        {
          "type": "tool_use",
          "id": "c2",
          "name": "sql",
          "input": {
            "q": "select 1"
          }
        }
      ]
    },
    {
      "role": "user",
      "content": [
        {
          "type": "tool_result",
          "tool_use_id": "c1",
          "content": "a.txt\nb.txt",
          "is_error": true
        },
        {
          "type": "tool_result",
          "tool_use_id": "c2",
          "content": "1"
        },
        {
          "type": "text",
          "text": "Also this image:"
        },
        {
          "type": "image",
          "source": {
            "type": "url",
            "url": "https://e.x/cat.png"
          }
        },
        {
          "type": "text",
          "text": "[image/jpeg: sha256:abc]"
        },
        {
          "type": "text",
          "text": "[system] Mid-conversation note."
        }
      ]
    },
    {
      "role": "assistant",
      "content": [
        {
          "type": "text",
          "text": "Done."
        },
        {
          "type": "tool_use",
          "id": "c3",
          "name": "noargs",
          "input": {}
        }
      ]
    },
    {
      "role": "user",
      "content": [
        {
          "type": "tool_result",
          "tool_use_id": "c3"
        }
      ]
    }
  ]
}
`
	if got != want {
		t.Fatalf("anthropic:\n%s\nwant:\n%s", got, want)
	}
}

func TestIDsAndJSONLFormats(t *testing.T) {
	dir := rtSession(t, rtRich)
	if got := rtRender(t, dir, "u2", false, render.FormatIDs); got != "sys\nu1\na1\nt1\nu2\n" {
		t.Fatalf("ids from u2: %q", got)
	}
	got := rtRender(t, dir, "t1", false, render.FormatJSONL)
	stored, _ := os.ReadFile(filepath.Join(dir, store.NodesFile))
	lines := strings.SplitAfter(string(stored), "\n")
	if got != strings.Join(lines[:4], "") {
		t.Fatalf("jsonl is not the stored lines:\n%s", got)
	}
}

// The summary node carries role user and renders as a user message in
// every provider format; in Anthropic's it merges with the next user turn.
func TestSummaryRendersAsUserMessage(t *testing.T) {
	const fixture = "../fixtures/compacted"
	var openai []render.OpenAIMessage
	if err := json.Unmarshal([]byte(rtRender(t, fixture, "", false, render.FormatOpenAI)), &openai); err != nil {
		t.Fatal(err)
	}
	if len(openai) != 4 || openai[1].Role != "user" || !strings.HasPrefix(openai[1].Content.(string), transcript.SummaryPrefix) {
		t.Fatalf("openai messages: %+v", openai)
	}
	var body render.AnthropicBody
	if err := json.Unmarshal([]byte(rtRender(t, fixture, "", false, render.FormatAnthropic)), &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Messages) != 2 || body.Messages[0].Role != "user" || len(body.Messages[0].Content) != 2 ||
		!strings.HasPrefix(body.Messages[0].Content[0].Text, transcript.SummaryPrefix) ||
		body.Messages[0].Content[1].Text != "Which regions had the most revenue?" || !strings.HasPrefix(body.System, "You are a data engineering") {
		t.Fatalf("anthropic body: %+v", body)
	}
	text := rtRender(t, fixture, "", false, render.FormatText)
	if !strings.Contains(text, "── summary · summary_second · covers 14 nodes\n[Previous conversation summary]\n") {
		t.Fatalf("text:\n%s", text)
	}
	// --raw: the covered turns come back, the summary goes.
	if ids := rtRender(t, fixture, "", true, render.FormatIDs); strings.Contains(ids, "summary") || strings.Count(ids, "\n") != 17 {
		t.Fatalf("raw ids:\n%s", ids)
	}
}

// Output is deterministic: the same session and head give the same bytes.
func TestDeterministic(t *testing.T) {
	dir := rtSession(t, rtRich)
	for _, f := range render.Formats {
		if a, b := rtRender(t, dir, "", false, f), rtRender(t, dir, "", false, f); a != b {
			t.Fatalf("%s differs between runs", f)
		}
	}
}

func TestBuildHeadErrors(t *testing.T) {
	g, err := dag.Open("../fixtures/compacted", store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	for id, want := range map[string]string{
		"nope":           `../fixtures/compacted: --head "nope": no such node`,
		"summary_second": `../fixtures/compacted: --head "summary_second": is a summary node; render from a turn`,
	} {
		_, err := render.Build(g, id, false)
		var he *render.HeadError
		if !errors.As(err, &he) || err.Error() != want {
			t.Errorf("Build(%s) = %v, want %q", id, err, want)
		}
	}
	if _, err := render.ParseFormat("yaml"); err == nil || err.Error() != `unknown format "yaml" (want text, ids, jsonl, openai, anthropic, responses, gemini)` {
		t.Fatalf("ParseFormat: %v", err)
	}
	// An empty session renders nothing, successfully.
	dir := filepath.Join(t.TempDir(), "e")
	store.Init(dir, "", rtWrite)
	for _, f := range render.Formats {
		out := rtRender(t, dir, "", false, f)
		want := map[render.Format]string{render.FormatOpenAI: "[\n]\n", render.FormatResponses: "[\n]\n", render.FormatAnthropic: "{\n  \"messages\": []\n}\n", render.FormatGemini: "{\n  \"contents\": []\n}\n"}[f]
		if out != want {
			t.Errorf("empty session, %s: %q", f, out)
		}
	}
}

// Preview (compact's in-memory check) renders exactly what storing the
// candidate summary would render.
func TestPreviewMatchesStoredSummary(t *testing.T) {
	src := "../fixtures/tools"
	dir := filepath.Join(t.TempDir(), "s")
	os.MkdirAll(dir, 0o755)
	for _, name := range []string{store.MetaFile, store.NodesFile} {
		data, _ := os.ReadFile(filepath.Join(src, name))
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	cand := transcript.Node{ID: "summary_p", Predecessor: "sys", Role: transcript.SummaryRole, Name: transcript.SummaryName,
		Content: transcript.TextContent(transcript.SummaryPrefix + "fixed ParseDuration")}
	cand.SetMeta("compaction", true)
	cand.SetMeta("covers_ids", []string{"u1", "a1", "t1", "a2", "t2", "a3", "t3", "a4", "t4", "a5"})

	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := render.Build(g, "", false)
	preview, err := v.Preview(&cand)
	g.S.Close()
	if err != nil {
		t.Fatal(err)
	}
	var previewIDs []string
	for _, n := range preview {
		previewIDs = append(previewIDs, n.ID)
	}

	if _, err := store.Update(context.Background(), dir, rtWrite, func(tx *store.Tx) error {
		_, err := tx.Append([]transcript.Node{cand}, store.AppendOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	stored := strings.Fields(rtRender(t, dir, "", false, render.FormatIDs))
	if !reflect.DeepEqual(previewIDs, stored) || stored[1] != "summary_p" {
		t.Fatalf("preview %v, stored %v", previewIDs, stored)
	}
	// A candidate off HEAD's spine is refused.
	bad := cand
	bad.SetMeta("covers_ids", []string{"u1", "a2"})
	g, _ = dag.Open(dir, store.OpenOptions{})
	defer g.S.Close()
	v, _ = render.Build(g, "", false)
	if _, err := v.Preview(&bad); err == nil {
		t.Fatal("a non-contiguous candidate was previewed")
	}
}

func ExampleWrite() {
	g, err := dag.Open("../fixtures/compacted", store.OpenOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.S.Close()
	view, err := render.Build(g, "", false) // from HEAD
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("summarized:", view.Summarized())
	render.Write(os.Stdout, view, render.FormatIDs)
	// Output:
	// summarized: true
	// sys
	// summary_second
	// u4
	// a8
}

// A Style decorates only the text format's headers, with the node's label.
func TestWriteStyled(t *testing.T) {
	g, err := dag.Open("../fixtures/compacted", store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	v, _ := render.Build(g, "", false)
	st := render.Style{Header: func(label, line string) string { return "<" + label + ">" + line }}
	var buf bytes.Buffer
	if err := render.WriteStyled(&buf, v, render.FormatText, st); err != nil {
		t.Fatal(err)
	}
	var headers []string
	for _, line := range strings.Split(buf.String(), "\n") {
		if strings.HasPrefix(line, "<") {
			headers = append(headers, line)
		}
	}
	want := []string{"<system>── system · sys", "<summary>── summary · summary_second · covers 14 nodes", "<user>── user · u4", "<assistant>── assistant · a8"}
	if !reflect.DeepEqual(headers, want) {
		t.Fatalf("headers %q", headers)
	}
	for _, f := range []render.Format{render.FormatIDs, render.FormatJSONL, render.FormatOpenAI, render.FormatAnthropic} {
		var a, b bytes.Buffer
		render.Write(&a, v, f)
		render.WriteStyled(&b, v, f, st)
		if a.String() != b.String() {
			t.Fatalf("%s was styled", f)
		}
	}
}

// TestAnthropicDropsWhitespaceTextBlocks: the Messages API answers 400 to
// {"type":"text","text":"\n\n"}; jsonl keeps the block as stored.
func TestAnthropicDropsWhitespaceTextBlocks(t *testing.T) {
	dir := rtSession(t, `{"id":"u1","role":"user","content":"fix it"}
{"id":"a1","role":"assistant","content":[{"type":"text","text":"\n\n"},{"type":"text","text":"done"},{"type":"text","text":" \t"}]}
{"id":"u2","role":"user","content":"\n\n"}
{"id":"a2","role":"assistant","content":"ok"}
`)
	body := rtRender(t, dir, "", false, render.FormatAnthropic)
	if !strings.Contains(body, `"done"`) {
		t.Fatalf("anthropic body lost the text:\n%s", body)
	}
	var req render.AnthropicBody
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if b.Type == "text" && strings.TrimSpace(b.Text) == "" {
				t.Fatalf("whitespace-only block in %+v", m)
			}
		}
	}
	if jsonl := rtRender(t, dir, "", false, render.FormatJSONL); !strings.Contains(jsonl, `{"type":"text","text":"\n\n"}`) {
		t.Fatalf("jsonl lost the stored block:\n%s", jsonl)
	}
}

// A leading system node's metadata.tools become the body's tools in
// Anthropic form (OpenAI form converted); a later system node marked
// system_message (a client sent it as a system-role message) stays one,
// and consecutive ones merge; an unmarked one is still "[system] …".
func TestAnthropicToolsAndSystemMessages(t *testing.T) {
	sys := &transcript.Node{ID: "s", Role: transcript.RoleSystem, Content: transcript.TextContent("Be brief.")}
	sys.SetMeta("tools", []any{
		map[string]any{"name": "Bash", "description": "run", "input_schema": map[string]any{"type": "object"}},
		map[string]any{"type": "function", "function": map[string]any{"name": "ls", "description": "list", "parameters": map[string]any{"type": "object"}}},
	})
	u := &transcript.Node{ID: "u", Role: transcript.RoleUser, Content: transcript.TextContent("hi")}
	env := &transcript.Node{ID: "e", Role: transcript.RoleSystem, Content: transcript.TextContent("ENV")}
	env.SetMeta("system_message", true)
	date := &transcript.Node{ID: "d", Role: transcript.RoleSystem, Content: transcript.TextContent("DATE")}
	date.SetMeta("system_message", true)
	note := &transcript.Node{ID: "n", Role: transcript.RoleSystem, Content: transcript.TextContent("note")}
	body := render.AnthropicRequest([]*transcript.Node{sys, u, env, date, note})
	tools, _ := json.Marshal(body.Tools)
	if want := `[{"description":"run","input_schema":{"type":"object"},"name":"Bash"},{"description":"list","input_schema":{"type":"object"},"name":"ls"}]`; string(tools) != want {
		t.Errorf("tools %s\nwant  %s", tools, want)
	}
	got, _ := json.Marshal(body.Messages)
	want := `[{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"system","content":[{"type":"text","text":"ENV"},{"type":"text","text":"DATE"}]},{"role":"user","content":[{"type":"text","text":"[system] note"}]}]`
	if string(got) != want {
		t.Errorf("messages %s\nwant     %s", got, want)
	}
}
