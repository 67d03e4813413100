package qwen_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/format/qwen"
	"github.com/ctxfold/ctxfold/internal/importtest"
	"github.com/ctxfold/ctxfold/transcript"
)

const interop = "../../testdata/interop/qwen-code/0.24.4/"

func chat(t testing.TB, scenario string) string {
	t.Helper()
	files, _ := filepath.Glob(interop + scenario + "/chats/*.jsonl")
	if len(files) != 1 {
		t.Fatalf("%s: want one chat recording, got %v", scenario, files)
	}
	return files[0]
}

func load(t *testing.T, file string, opts qwen.Options) (*importtest.Conv, error) {
	t.Helper()
	var tg importtest.Target
	err := qwen.Import(context.Background(), []string{file}, opts, &tg)
	if len(tg.Convs) == 0 {
		return nil, err
	}
	return tg.Convs[0], err
}

func write(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func byID(c *importtest.Conv) map[string]transcript.Node {
	m := map[string]transcript.Node{}
	for _, n := range c.Nodes {
		m[n.ID] = n
	}
	return m
}

// The real recording of a tool call: the call on the assistant node with
// its usage, the result as a tool node, bookkeeping counted as skipped.
func TestToolRecording(t *testing.T) {
	c, err := load(t, chat(t, "tool"), qwen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, n := range c.Nodes {
		roles = append(roles, string(n.Role))
	}
	if got := strings.Join(roles, " "); got != "user assistant tool assistant" {
		t.Fatalf("roles %s", got)
	}
	call, result := c.Nodes[1], c.Nodes[2]
	if len(call.ToolCalls) != 1 || call.ToolCalls[0].Name != "run_shell_command" || call.Usage == nil || call.Usage.InputTokens == 0 {
		t.Errorf("call node %+v", call)
	}
	if result.ToolCallID != call.ToolCalls[0].ID || !strings.Contains(result.Content.Text, "Output: notes.txt") {
		t.Errorf("result node %+v", result)
	}
	if c.Head != c.Nodes[3].ID || c.Model != "qwen3-coder-plus" {
		t.Errorf("head %q model %q", c.Head, c.Model)
	}
	if c.Counts[[2]string{"system/ui_telemetry", transcript.OutcomeSkipped}] == 0 || c.Counts[[2]string{"tool_result", transcript.OutcomeImported}] != 1 {
		t.Errorf("counts %v", c.Counts)
	}
}

// The client's automatic compression in the middle of a turn: a summary
// covering everything before it, then the contents it kept (its
// acknowledgement with the pending call, the call's result) as new nodes.
func TestCompressionRecording(t *testing.T) {
	c, err := load(t, chat(t, "compression"), qwen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sum *transcript.Node
	for i, n := range c.Nodes {
		if n.IsSummary() {
			sum = &c.Nodes[i]
		}
	}
	if sum == nil {
		t.Fatal("no summary node")
	}
	covers := sum.CoversIDs()
	if len(covers) != 3 || covers[0] != c.Nodes[0].ID || !strings.HasPrefix(sum.Content.Text, transcript.SummaryPrefix+"<state_snapshot>") {
		t.Fatalf("summary covers %v, content %q", covers, sum.Content.Text)
	}
	nodes := byID(c)
	var kept []transcript.Node
	for _, n := range c.Nodes {
		if strings.Contains(n.ID, "/kept") {
			kept = append(kept, n)
		}
	}
	if len(kept) != 2 || kept[0].Predecessor != covers[2] || kept[0].Content.Text != "Got it. Thanks for the additional context!" ||
		len(kept[0].ToolCalls) != 1 || kept[1].Role != transcript.RoleTool {
		t.Fatalf("kept contents %+v", kept)
	}
	// The next record extends the kept tail.
	var after transcript.Node
	for _, n := range c.Nodes {
		if n.Predecessor == kept[1].ID {
			after = n
		}
	}
	if after.Role != transcript.RoleAssistant || after.Usage == nil || nodes[c.Head].ID == "" {
		t.Errorf("after the compression: %+v, head %q", after, c.Head)
	}
}

// A rewind re-roots the next record on an earlier one: the abandoned turn
// stays as a branch, HEAD is the client's last record.
func TestRewindBranch(t *testing.T) {
	p := write(t, `{"uuid":"u1","parentUuid":null,"sessionId":"s","type":"user","message":{"role":"user","parts":[{"text":"first"}]}}
{"uuid":"a1","parentUuid":"u1","sessionId":"s","type":"assistant","model":"m","message":{"role":"model","parts":[{"text":"one"}]},"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":2}}
{"uuid":"u2","parentUuid":"a1","sessionId":"s","type":"user","message":{"role":"user","parts":[{"text":"abandoned"}]}}
{"uuid":"t1","parentUuid":"u2","sessionId":"s","type":"system","subtype":"ui_telemetry","systemPayload":{}}
{"uuid":"a2","parentUuid":"t1","sessionId":"s","type":"assistant","message":{"role":"model","parts":[{"text":"thinking","thought":true},{"text":"two"}]}}
{"uuid":"u3","parentUuid":"a1","sessionId":"s","type":"user","message":{"role":"user","parts":[{"text":"again"}]}}
{"uuid":"a3","parentUuid":"u3","sessionId":"s","type":"assistant","message":{"role":"model","parts":[]}}
`)
	c, err := load(t, p, qwen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := byID(c)
	if n["u3"].Predecessor != "a1" || n["u2"].Predecessor != "a1" || n["a2"].Predecessor != "u2" || c.Head != "u3" {
		t.Fatalf("u3 after %q, u2 after %q, a2 after %q, head %q", n["u3"].Predecessor, n["u2"].Predecessor, n["a2"].Predecessor, c.Head)
	}
	if b := n["a2"].Content.Blocks; len(b) != 2 || b[0].Type != transcript.BlockThinking {
		t.Errorf("thought part: %+v", n["a2"].Content)
	}
	if u := n["a1"].Usage; u == nil || u.InputTokens != 10 || u.OutputTokens != 2 {
		t.Errorf("usage %+v", u)
	}
	if c.Counts[[2]string{"assistant", transcript.OutcomeSkipped}] != 1 {
		t.Errorf("the empty model message is not counted as skipped: %v", c.Counts)
	}
}

// A function response recorded as an error, and one whose uuid-derived
// id another record already took.
func TestToolErrorAndIDClash(t *testing.T) {
	p := write(t, `{"uuid":"u1","parentUuid":null,"sessionId":"s","type":"user","message":{"role":"user","parts":[{"text":"go"}]}}
{"uuid":"a1","parentUuid":"u1","sessionId":"s","type":"assistant","message":{"role":"model","parts":[{"functionCall":{"id":"c1","name":"read_file","args":{"path":"x"}}},{"functionCall":{"id":"c2","name":"read_file","args":null}}]}}
{"uuid":"r1/1","parentUuid":"a1","sessionId":"s","type":"user","message":{"role":"user","parts":[{"text":"odd"}]}}
{"uuid":"r1","parentUuid":"a1","sessionId":"s","type":"tool_result","message":{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"read_file","response":{"error":"no such file"}}},{"functionResponse":{"id":"c2","name":"read_file","response":{"llmContent":[1]}}}]}}
`)
	c, err := load(t, p, qwen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := byID(c)
	if r := n["r1"]; r.Content.Text != "no such file" || string(r.Metadata["is_error"]) != "true" {
		t.Errorf("error result %+v", r)
	}
	if r := n["r1/1~2"]; r.ToolCallID != "c2" || r.Content.Text != `{"llmContent":[1]}` || r.Predecessor != "r1" {
		t.Errorf("second result %+v", r)
	}
	if string(n["a1"].ToolCalls[1].Arguments) != "{}" {
		t.Errorf("null args: %s", n["a1"].ToolCalls[1].Arguments)
	}
}

// Older clients record calls and responses without ids (paired by name
// and order) and compressions with only their token counts.
func TestOlderRecords(t *testing.T) {
	p := write(t, `{"uuid":"u1","parentUuid":null,"sessionId":"s","type":"user","message":{"role":"user","parts":[{"text":"go"}]}}
{"uuid":"a1","parentUuid":"u1","sessionId":"s","type":"assistant","message":{"role":"model","parts":[{"functionCall":{"name":"ls","args":{}}},{"functionCall":{"name":"cat","args":{}}}]}}
{"uuid":"c1","parentUuid":"a1","sessionId":"s","type":"system","subtype":"chat_compression"}
{"uuid":"r1","parentUuid":"c1","sessionId":"s","type":"tool_result","message":{"role":"tool","parts":[{"functionResponse":{"name":"cat","response":{"output":"text"}}},{"functionResponse":{"name":"ls","response":{"output":"a b"}}}]}}
{"uuid":"c2","parentUuid":"r1","sessionId":"s","type":"system","subtype":"chat_compression","systemPayload":{"info":{"newTokenCount":3}}}
`)
	c, err := load(t, p, qwen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := byID(c)
	calls := n["a1"].ToolCalls
	if len(calls) != 2 || calls[0].ID != "a1#call1" || n["r1"].ToolCallID != "a1#call2" || n["r1/1"].ToolCallID != "a1#call1" {
		t.Fatalf("pairing: calls %+v, results %q %q", calls, n["r1"].ToolCallID, n["r1/1"].ToolCallID)
	}
	if got := c.Counts[[2]string{"system/chat_compression", transcript.OutcomeSkipped}]; got != 2 || c.Head != "r1/1" {
		t.Errorf("compressions skipped %d, head %q", got, c.Head)
	}
}

// A client still writing leaves its last line torn: the records before it
// import, the torn one is counted.
func TestTornLastLine(t *testing.T) {
	data, err := os.ReadFile(chat(t, "tool"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := load(t, write(t, string(data[:len(data)-40])), qwen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Counts[[2]string{"torn line", transcript.OutcomeSkipped}] != 1 || len(c.Nodes) != 3 || len(c.Warnings) != 1 {
		t.Errorf("nodes %d, counts %v, warnings %v", len(c.Nodes), c.Counts, c.Warnings)
	}
}

// Cut before the first answer, a session still names its model: the
// telemetry of the request records it first.
func TestModelBeforeTheFirstAnswer(t *testing.T) {
	data, err := os.ReadFile(chat(t, "tool"))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	c, err := load(t, write(t, string(bytes.Join(lines[:3], nil))), qwen.Options{})
	if err != nil || c.Model != "qwen3-coder-plus" || len(c.Nodes) != 1 {
		t.Fatalf("model %q, nodes %d, err %v", c.Model, len(c.Nodes), err)
	}
}

func TestHostileInput(t *testing.T) {
	cases := map[string]string{
		"not JSON":          "{\"uuid\":\"u1\",\n",
		"no uuid":           `{"parentUuid":null,"type":"user"}` + "\n",
		"role":              `{"uuid":"u1","parentUuid":null,"type":"user","message":{"role":"robot","parts":[{"text":"x"}]}}` + "\n",
		"unpaired response": `{"uuid":"r1","parentUuid":null,"type":"tool_result","message":{"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}}]}}` + "\n",
		"compression shape": `{"uuid":"c1","parentUuid":null,"type":"system","subtype":"chat_compression","systemPayload":{"compressedHistory":"no"}}` + "\n",
		"empty":             "\n\n",
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := load(t, write(t, text), qwen.Options{})
			var pe *transcript.ParseError
			if !errors.As(err, &pe) || !strings.HasSuffix(pe.File, "s.jsonl") {
				t.Fatalf("want a parse error naming the file, got %v", err)
			}
			if name != "empty" && pe.Line != 1 {
				t.Errorf("line %d, want 1: %v", pe.Line, err)
			}
		})
	}
	_, err := load(t, chat(t, "chat"), qwen.Options{MaxLineBytes: 100})
	var pe *transcript.ParseError
	if !errors.As(err, &pe) || !strings.Contains(pe.Msg, "100-byte limit") {
		t.Fatalf("limit: err %v", err)
	}
}

func TestDetect(t *testing.T) {
	for _, s := range []string{"chat", "tool", "compression"} {
		data, err := os.ReadFile(chat(t, s))
		if err != nil {
			t.Fatal(err)
		}
		if !qwen.Detect(data) {
			t.Errorf("%s: not detected", s)
		}
		// A first line cut by the end of head.
		if !qwen.Detect(data[:bytes.IndexByte(data, '\n')-3]) {
			t.Errorf("%s: a cut first line is not detected", s)
		}
	}
	for _, other := range []string{
		"../../testdata/interop/gemini-cli/0.61.0/compression/chats/session-2026-01-01T00-00-00000001.jsonl",
		"../../fixtures/import/gemini/session-rewind.jsonl",
	} {
		data, err := os.ReadFile(other)
		if err != nil {
			t.Fatal(err)
		}
		if qwen.Detect(data) {
			t.Errorf("%s: taken for Qwen Code", other)
		}
	}
	claude := `{"parentUuid":null,"isSidechain":false,"uuid":"u1","sessionId":"s","type":"user","message":{"role":"user","content":"hi"}}` + "\n"
	if qwen.Detect([]byte(claude)) {
		t.Error("a Claude Code record is taken for Qwen Code")
	}
}

func FuzzImport(f *testing.F) {
	importtest.Fuzz(f, ".", []string{chat(f, "tool"), chat(f, "compression"), chat(f, "compress")}, "s.jsonl", qwen.Import)
}

// Find lists projects/*/chats/*.jsonl under ~/.qwen, or under the folder
// $QWEN_RUNTIME_DIR, the settings' runtimeOutputDir or $QWEN_HOME names,
// with what the file says.
func TestFind(t *testing.T) {
	home := t.TempDir()
	src, err := os.ReadFile(chat(t, "tool"))
	if err != nil {
		t.Fatal(err)
	}
	put := func(dir string) string {
		p := filepath.Join(dir, "projects", "-work-demo", "chats", "abc.jsonl")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, src, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	def := put(filepath.Join(home, ".qwen"))
	moved := put(filepath.Join(home, "elsewhere"))
	env := func(vars map[string]string) input.Env {
		return input.Env{Home: home, Getenv: func(k string) string { return vars[k] }}
	}
	got, err := qwen.Find(env(nil))
	if err != nil || len(got) != 1 || got[0].File != def {
		t.Fatalf("default: %+v, %v", got, err)
	}
	f := got[0]
	if f.SessionID != "00000000-0000-4000-8000-000000000001" || f.Project != "/qwen-fixture/project" || f.Model != "qwen3-coder-plus" || f.Bytes != int64(len(src)) {
		t.Errorf("found %+v", f)
	}
	for _, name := range []string{"QWEN_HOME", "QWEN_RUNTIME_DIR"} {
		got, err = qwen.Find(env(map[string]string{name: "~/elsewhere"}))
		if err != nil || len(got) != 1 || got[0].File != moved {
			t.Errorf("%s: %+v, %v", name, got, err)
		}
	}
	// The user settings may move the runtime folder.
	settings := filepath.Join(home, ".qwen", "settings.json")
	if err := os.WriteFile(settings, []byte(`{"advanced":{"runtimeOutputDir":"~/elsewhere"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err = qwen.Find(env(nil)); err != nil || len(got) != 1 || got[0].File != moved {
		t.Errorf("runtimeOutputDir: %+v, %v", got, err)
	}
	os.WriteFile(settings, []byte(`{"advanced":{"runtimeOutputDir":".qwen"}}`), 0o644)
	if got, err = qwen.Find(env(nil)); err != nil || len(got) != 1 || got[0].File != def {
		t.Errorf("a relative runtimeOutputDir: %+v, %v", got, err)
	}
	got, err = qwen.Find(env(map[string]string{"QWEN_HOME": filepath.Join(home, "missing")}))
	if err != nil || len(got) != 0 {
		t.Errorf("missing folder: %+v, %v", got, err)
	}
}

// A sub-agent's transcript (subagents/<session id>/agent-*.jsonl) joins
// its session as a caller subtree of the node whose call started it; given
// with its session it is not imported twice, given alone it is a
// conversation of its own.
func TestSubagent(t *testing.T) {
	main := chat(t, "subagent")
	subs, _ := filepath.Glob(interop + "subagent/subagents/*/agent-*.jsonl")
	if len(subs) != 1 {
		t.Fatalf("sub-agent files %v", subs)
	}
	var tg importtest.Target
	if err := qwen.Import(context.Background(), []string{subs[0], main}, qwen.Options{}, &tg); err != nil {
		t.Fatal(err)
	}
	if len(tg.Convs) != 1 {
		t.Fatalf("%d conversations, want the session alone", len(tg.Convs))
	}
	c := tg.Convs[0]
	var caller string
	for _, n := range c.Nodes {
		if len(n.ToolCalls) == 1 && n.ToolCalls[0].Name == "agent" {
			caller = n.ID
		}
	}
	var called []transcript.Node
	for _, n := range c.Nodes {
		if n.Caller != "" {
			called = append(called, n)
		}
	}
	if caller == "" || len(called) != 2 || called[0].Caller != caller || called[0].Predecessor != "" || called[1].Predecessor != called[0].ID {
		t.Fatalf("caller %q, sub-agent nodes %+v", caller, called)
	}
	if c.Head == called[1].ID || c.Counts[[2]string{"subagent file", transcript.OutcomeImported}] != 1 {
		t.Errorf("head %q, counts %v", c.Head, c.Counts)
	}
	alone, err := load(t, subs[0], qwen.Options{})
	if err != nil || len(alone.Nodes) != 2 || alone.Nodes[0].Caller != "" || alone.Head != alone.Nodes[1].ID {
		t.Fatalf("alone: %+v, %v", alone, err)
	}
}
