package gemini_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/format/gemini"
	"github.com/ctxfold/ctxfold/internal/importtest"
	"github.com/ctxfold/ctxfold/transcript"
)

// Recordings of the real Gemini CLI 0.61.0 against the fake provider
// (interop/gemini-cli/record.sh); docs/INTEROP-gemini-cli.md.
const interop = "../../testdata/interop/gemini-cli/0.61.0/"

func session(t *testing.T, scenario string) *importtest.Conv {
	t.Helper()
	files, _ := filepath.Glob(interop + scenario + "/chats/session-*.jsonl")
	if len(files) == 0 {
		t.Fatalf("no recording for %s", scenario)
	}
	// The first file is the session; a resume may leave a second one
	// holding only the session context.
	c, err := load(t, files[0], gemini.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// spine is HEAD's chain, root first.
func spine(c *importtest.Conv) []transcript.Node {
	byID := map[string]transcript.Node{}
	for _, n := range c.Nodes {
		byID[n.ID] = n
	}
	var out []transcript.Node
	for id := c.Head; id != ""; id = byID[id].Predecessor {
		out = append([]transcript.Node{byID[id]}, out...)
	}
	return out
}

func tips(c *importtest.Conv) int {
	hasChild := map[string]bool{}
	for _, n := range c.Nodes {
		hasChild[n.Predecessor] = true
	}
	k := 0
	for _, n := range c.Nodes {
		if !hasChild[n.ID] {
			k++
		}
	}
	return k
}

// Issue 18 #25: the functionCall turn is an assistant node with its call,
// the functionResponse turn the call's tool node; no empty node is left.
func TestInteropToolCall(t *testing.T) {
	for _, sc := range []string{"tool", "tool-error"} {
		c := session(t, sc)
		got := spine(c)
		var roles []string
		for _, n := range got {
			roles = append(roles, string(n.Role))
			if n.Role != transcript.RoleTool && len(n.ToolCalls) == 0 && n.Content.Text == "" && len(n.Content.Blocks) == 0 {
				t.Errorf("%s: empty node %s (%s)", sc, n.ID, n.Role)
			}
		}
		if strings.Join(roles, " ") != "user user assistant tool assistant" {
			t.Fatalf("%s: roles %v", sc, roles)
		}
		call, result := got[2], got[3]
		if len(call.ToolCalls) != 1 || call.ToolCalls[0].Name != "run_shell_command" || !strings.Contains(string(call.ToolCalls[0].Arguments), `"command":"`) {
			t.Fatalf("%s: call %+v", sc, call.ToolCalls)
		}
		if result.ToolCallID != call.ToolCalls[0].ID || result.Name != "run_shell_command" || !strings.Contains(result.Content.Text, "Output: ") {
			t.Errorf("%s: result %+v", sc, result)
		}
		if c.Counts[[2]string{"toolCalls.result", transcript.OutcomeMerged}] != 1 {
			t.Errorf("%s: the toolCalls copy of the result is not counted: %v", sc, c.Counts)
		}
	}
	if r := spine(session(t, "tool-error"))[3]; !strings.Contains(r.Content.Text, "No such file") {
		t.Errorf("failed command's output lost: %q", r.Content.Text)
	}
}

// Issue 18 #25: a resume writes a second header, a truncated message list
// and then the whole list again; none of it is a branch. After a tool call
// the client's list repeats the function result, which one tool node holds.
func TestInteropResumeIsNoBranch(t *testing.T) {
	for sc, want := range map[string]string{
		"resume":      "user user assistant user assistant user assistant",
		"resume-tool": "user user assistant tool assistant user assistant",
	} {
		c := session(t, sc)
		if n := tips(c); n != 1 {
			t.Errorf("%s: %d tips, want 1", sc, n)
		}
		var roles []string
		for _, n := range spine(c) {
			roles = append(roles, string(n.Role))
		}
		if strings.Join(roles, " ") != want || len(c.Nodes) != len(roles) {
			t.Errorf("%s: spine %v of %d nodes", sc, roles, len(c.Nodes))
		}
		// The rewritten lists lack the model and token counts of the
		// messages they repeat; the import keeps them.
		for _, n := range c.Nodes {
			if n.Role == transcript.RoleAssistant && (n.Usage == nil || n.Usage.InputTokens == 0) {
				t.Errorf("%s: %s lost its usage", sc, n.ID)
			}
		}
		if c.Model != "gemini-3.8-flash" {
			t.Errorf("%s: model %q", sc, c.Model)
		}
	}
}

// Gemini CLI's compression rewrites the list: the snapshot and its
// acknowledgement, then the kept turn under new ids. It imports as the
// client's own compaction (issue 29 #10), as Claude Code's and Codex's do:
// one summary node covering the compressed turns, carrying the contents
// sent in their place; the spine is what the client sent before, the kept
// turn stays on it, and nothing becomes a branch.
func TestInteropCompression(t *testing.T) {
	c := session(t, "compression")
	sp := spine(c)
	var texts []string
	for _, n := range sp {
		texts = append(texts, string(n.Role)+":"+firstLine(n.Content.PlainText()))
	}
	want := "user:<session_context> user:List the files here. RUN: ls -1 assistant: tool:<untrusted_context> " +
		"assistant:The command run_shell_command returned: Output: notes.txt user:Now read the notes. RUN: cat notes.txt " +
		"assistant: tool:<untrusted_context> assistant:The command run_shell_command returned: Output: hello from the interop fixture"
	if got := strings.Join(texts, " "); got != want {
		t.Fatalf("spine\n got %s\nwant %s", got, want)
	}
	if len(sp[6].ToolCalls) != 1 || sp[7].ToolCallID != sp[6].ToolCalls[0].ID {
		t.Errorf("kept call (only a functionCall part after the rewrite) %+v / %+v", sp[6], sp[7])
	}
	var summaries []transcript.Node
	for _, n := range c.Nodes {
		if n.IsSummary() {
			summaries = append(summaries, n)
		}
		if n.Metadata["gemini_rewound"] != nil {
			t.Errorf("node %s is flagged rewound: a compression is no branch", n.ID)
		}
	}
	if len(summaries) != 1 {
		t.Fatalf("%d summary nodes, want 1", len(summaries))
	}
	s := summaries[0]
	var covered []string
	for _, n := range sp[1:5] {
		covered = append(covered, n.ID)
	}
	if got := s.CoversIDs(); strings.Join(got, " ") != strings.Join(covered, " ") || s.Predecessor != sp[0].ID {
		t.Errorf("summary covers %v after %s, want %v after %s", got, s.Predecessor, covered, sp[0].ID)
	}
	if !strings.HasPrefix(s.Content.PlainText(), transcript.SummaryPrefix+"<state_snapshot>") {
		t.Errorf("summary text %.80q", s.Content.PlainText())
	}
	var contents []struct {
		Role  string
		Parts []map[string]any
	}
	if err := json.Unmarshal(s.Metadata[transcript.MetaGeminiContents], &contents); err != nil || len(contents) != 2 ||
		contents[0].Role != "user" || contents[1].Role != "model" || contents[1].Parts[0]["text"] != "Got it. Thanks for the additional context!" {
		t.Errorf("gemini_contents %s (%v)", s.Metadata[transcript.MetaGeminiContents], err)
	}
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// A call kept only as a functionCall part, answered by a user message
// with an error response and a text part.
func TestFunctionCallPartsAndErrorResponse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(path, []byte(`{"sessionId":"s","projectHash":"p","startTime":"t"}
{"id":"u","type":"user","content":[{"text":"go"}]}
{"id":"g","type":"gemini","content":[{"functionCall":{"id":"c1","name":"run_shell_command","args":{"command":"false"}}}]}
{"id":"r","type":"user","content":[{"functionResponse":{"id":"c1","name":"run_shell_command","response":{"error":"exit 1"}}},{"text":"and then?"}]}
`), 0o644)
	c, err := load(t, path, gemini.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(c.Nodes); got != "u g r r.text" {
		t.Fatalf("nodes %s", got)
	}
	g, r, txt := c.Nodes[1], c.Nodes[2], c.Nodes[3]
	if len(g.ToolCalls) != 1 || g.ToolCalls[0].ID != "c1" || string(g.ToolCalls[0].Arguments) != `{"command":"false"}` {
		t.Errorf("call %+v", g.ToolCalls)
	}
	var resp map[string]string
	json.Unmarshal(r.Metadata["gemini_response"], &resp)
	if r.Role != transcript.RoleTool || r.ToolCallID != "c1" || r.Content.Text != "exit 1" || string(r.Metadata["is_error"]) != "true" || resp["error"] != "exit 1" {
		t.Errorf("result %+v", r)
	}
	if txt.Role != transcript.RoleUser || txt.Content.Text != "and then?" || txt.Predecessor != "r" {
		t.Errorf("text after the result %+v", txt)
	}
}

// A list that leaves messages out and is not followed by one restoring
// them is a real rewrite: they stay as a branch.
func TestSetMessagesCutStays(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(path, []byte(`{"sessionId":"s","projectHash":"p","startTime":"t"}
{"id":"a","type":"user","content":"one"}
{"id":"b","type":"gemini","content":"two"}
{"$set":{"messages":[{"id":"a","type":"user","content":"one"}]}}
{"$set":{"lastUpdated":"t2"}}
{"id":"c","type":"user","content":"three"}
`), 0o644)
	c, err := load(t, path, gemini.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range c.Nodes {
		got = append(got, n.ID+"<"+n.Predecessor)
	}
	if strings.Join(got, " ") != "a< b<a c<a" || c.Head != "c" || string(c.Nodes[1].Metadata["gemini_rewound"]) != "true" {
		t.Fatalf("nodes %v head %q", got, c.Head)
	}
}

// A /chat save checkpoint is the history as the CLI sent it: contents in
// order, calls and results as for a recording.
func TestCheckpoint(t *testing.T) {
	c, err := load(t, dir+"checkpoint-demo.json", gemini.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range c.Nodes {
		got = append(got, n.ID+":"+string(n.Role)+"<"+n.Predecessor)
	}
	if strings.Join(got, " ") != "c1:user< c2:user<c1 c3:assistant<c2 c4:tool<c3 c5:assistant<c4" || c.Head != "c5" || c.Name != "checkpoint-demo" {
		t.Fatalf("nodes %v head %q name %q", got, c.Head, c.Name)
	}
	if tc := c.Nodes[2].ToolCalls; len(tc) != 1 || tc[0].ID != "run_shell_command_1700000000000_0" || c.Nodes[3].ToolCallID != tc[0].ID || c.Nodes[3].Content.Text != "notes.txt" {
		t.Errorf("call %+v result %+v", tc, c.Nodes[3])
	}
	if c.Counts[[2]string{"checkpoint", transcript.OutcomeMerged}] != 1 {
		t.Errorf("counts %v", c.Counts)
	}
	c, err = load(t, dir+"checkpoint-old.json", gemini.Options{})
	if err != nil || ids(c.Nodes) != "c1 c2" || c.Nodes[1].Content.Text != "Hi." {
		t.Fatalf("bare array: %v %+v", err, c)
	}
	for _, f := range []string{"checkpoint-demo.json", "checkpoint-old.json"} {
		data, _ := os.ReadFile(dir + f)
		if !gemini.Detect(data) {
			t.Errorf("%s not detected", f)
		}
	}
	if gemini.Detect([]byte(`[{"mapping":{},"title":"x","content":{"parts":["a"]},"author":{"role":"user"}}]`)) {
		t.Error("a ChatGPT export detected as a checkpoint")
	}
	// Saved by the real client in a resumed session: the result it holds
	// twice is one tool node.
	c, err = load(t, interop+"checkpoint/checkpoints/checkpoint-demo.json", gemini.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st := importtest.StatsOf(c.Nodes); st.Tool != 1 || st.Calls != 1 || c.Counts[[2]string{"checkpoint functionResponse", transcript.OutcomeMerged}] != 1 {
		t.Errorf("recorded checkpoint: %+v, counts %v", st, c.Counts)
	}
	bad := filepath.Join(t.TempDir(), "checkpoint-bad.json")
	os.WriteFile(bad, []byte(`[{"role":"user","parts":[{"text":"a"}]},{"role":"tool","parts":[]}]`), 0o644)
	if _, err := load(t, bad, gemini.Options{}); err == nil || !strings.Contains(err.Error(), `"role" must be "user" or "model", got "tool"`) {
		t.Errorf("bad role: %v", err)
	}
}

// A sub-agent's transcript (chats/<session id>/<agent session>.jsonl) is a
// caller subtree of the node whose invoke_agent call ran it; HEAD stays on
// the session.
func TestInteropSubagent(t *testing.T) {
	c := session(t, "subagent")
	var call transcript.Node
	for _, n := range c.Nodes {
		if len(n.ToolCalls) > 0 && n.ToolCalls[0].Name == "invoke_agent" {
			call = n
		}
	}
	if call.ID == "" {
		t.Fatal("no invoke_agent call")
	}
	var sub []transcript.Node
	for _, n := range c.Nodes {
		if n.Caller != "" {
			sub = append(sub, n)
			if n.Caller != call.ID {
				t.Errorf("%s: caller %q, want %q", n.ID, n.Caller, call.ID)
			}
		}
	}
	if len(sub) != 3 || sub[0].Content.Text != "Count the files in this directory." || sub[0].Predecessor != "" ||
		len(sub[1].ToolCalls) != 1 || sub[1].ToolCalls[0].Name != "complete_task" || sub[2].Role != transcript.RoleTool {
		t.Fatalf("sub-agent nodes %+v", sub)
	}
	if sp := spine(c); sp[len(sp)-1].Caller != "" || c.Counts[[2]string{"subagent file", transcript.OutcomeImported}] != 1 {
		t.Errorf("HEAD %s, counts %v", c.Head, c.Counts)
	}
}
