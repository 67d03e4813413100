package copilot_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/format/copilot"
	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/internal/importtest"
	"github.com/ctxfold/ctxfold/transcript"
)

const (
	fixture = "../../fixtures/import/copilot/events.jsonl"
	interop = "../../testdata/interop/copilot/1.0.102/"
)

func load(t *testing.T, file string) (*importtest.Conv, error) {
	t.Helper()
	var tg importtest.Target
	err := copilot.Import(context.Background(), []string{file}, input.Options{}, &tg)
	if len(tg.Convs) == 0 {
		return nil, err
	}
	return tg.Convs[0], err
}

// loadLog writes log as a session's events.jsonl and imports it; path is
// the file, which a parse error must name.
func loadLog(t *testing.T, log string) (c *importtest.Conv, path string, err error) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "events.jsonl")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err = load(t, path)
	return c, path, err
}

func TestDetect(t *testing.T) {
	for _, f := range []string{fixture, interop + "compact/events.jsonl", interop + "chat/events.jsonl"} {
		head, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !copilot.Detect(head[:min(len(head), 64<<10)]) {
			t.Errorf("%s: not detected", f)
		}
	}
	for _, head := range []string{
		`{"sessionId":"s","projectHash":"p","startTime":"t","lastUpdated":"t","kind":"main"}`, // Gemini CLI
		`{"type":"user","message":{"role":"user","content":"hi"},"parentUuid":null,"sessionId":"s","uuid":"u1"}`,
		`{"type":"session.start","data":{"sessionId":"s"},"id":"e1","parentId":null}`, // no producer
		`{"type":"response_item","payload":{},"id":"x","data":{},"parentId":null}`,
		``, `[]`,
	} {
		if copilot.Detect([]byte(head)) {
			t.Errorf("detected: %s", head)
		}
	}
	// A log whose first line is a later event (its start cut off).
	if !copilot.Detect([]byte(`{"type":"user.message","data":{"content":"hi"},"id":"e2","timestamp":"t","parentId":"e1"}`)) {
		t.Error("a log starting with user.message not detected")
	}
}

func TestImportFixture(t *testing.T) {
	c, err := load(t, fixture)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]transcript.Node{}
	var order []string
	for _, n := range c.Nodes {
		byID[n.ID] = n
		order = append(order, n.ID)
	}
	if got := strings.Join(order, " "); got != "system e02 e06 e08 e09 system-sub-1 e10a e11 e11b e13 summary_e16 e17 e20" {
		t.Fatalf("nodes %s", got)
	}
	// The summary names the record it was made from, which is how audit
	// says whose summary it is.
	if src := string(byID["summary_e16"].Metadata["source"]); !strings.HasPrefix(src, `"copilot `) {
		t.Errorf("summary source %s", src)
	}
	if c.Name != "6f1c2d3e-0000-4000-8000-000000000001" || c.Head != "e20" || c.Model != "claude-sonnet-4.5" {
		t.Errorf("name %q head %q model %q", c.Name, c.Head, c.Model)
	}
	// The root system node holds the last system prompt the client wrote.
	if s := byID["system"]; s.Role != transcript.RoleSystem || s.Content.Text != "You are the GitHub Copilot CLI (second version of the prompt)." {
		t.Errorf("system %+v", s)
	}
	if u := byID["e02"]; u.Predecessor != "system" || !strings.HasPrefix(u.Content.Text, "<current_datetime>") {
		t.Errorf("user %+v", u)
	}
	a := byID["e06"]
	if len(a.ToolCalls) != 3 || a.ToolCalls[0].ID != "tc1" || string(a.ToolCalls[0].Arguments) != `{"command":"ls","description":"List files"}` {
		t.Errorf("calls %+v", a.ToolCalls)
	}
	if !a.Content.IsBlocks || a.Content.Blocks[0].Type != "thinking" || a.Content.Blocks[0].Signature != "sig-1" || a.Content.Blocks[1].Text != "Listing them." {
		t.Errorf("content %+v", a.Content)
	}
	if u := a.Usage; u == nil || u.InputTokens != 9000 || u.CachedInputTokens != 8000 || string(u.Extra[transcript.UsageContextWindow]) != "128000" {
		t.Errorf("usage %+v", a.Usage)
	}
	if r := byID["e08"]; r.ToolCallID != "tc2" || r.Content.Text != "Path does not exist" || string(r.Metadata["is_error"]) != "true" {
		t.Errorf("error result %+v", r)
	}
	if r := byID["e09"]; r.ToolCallID != "tc1" || !strings.HasPrefix(r.Content.Text, "README.md\nmain.go\n<shellId") {
		t.Errorf("result %+v", r)
	}
	// The sub-agent: its own chain, under the node whose task call
	// started it, with its own system prompt and usage; the call's result
	// follows the other results on the session's chain.
	for _, id := range []string{"system-sub-1", "e10a", "e11"} {
		if n := byID[id]; n.Caller != "e06" {
			t.Errorf("%s: caller %q", id, n.Caller)
		}
	}
	if byID["system-sub-1"].Predecessor != "" || byID["system-sub-1"].Content.Text != "You are an exploration agent." ||
		byID["e10a"].Predecessor != "system-sub-1" || byID["e11"].Predecessor != "e10a" {
		t.Errorf("sub-agent chain %+v", byID["system-sub-1"])
	}
	if u := byID["e11"].Usage; u == nil || u.InputTokens != 3000 {
		t.Errorf("sub-agent usage %+v", u)
	}
	if r := byID["e11b"]; r.Predecessor != "e09" || r.ToolCallID != "tc3" || r.Caller != "" {
		t.Errorf("task result %+v", r)
	}
	s := byID["summary_e16"]
	if got := strings.Join(s.CoversIDs(), " "); got != "e02 e06 e08 e09 e11b e13" || s.Predecessor != "system" {
		t.Errorf("summary covers %q after %q", got, s.Predecessor)
	}
	want := transcript.SummaryPrefix + "Some of the conversation history has been summarized to free up context.\n\n" +
		"You were originally given instructions from a user over one or more turns. Here were the user messages:\n" +
		"<user_message>\nList the files.\n</user_message>\n\n" +
		"Here is a summary of the prior context:\n<summary>\n<overview>The user listed the files.</overview>\n</summary>\n"
	if s.Content.Text != want {
		t.Errorf("summary text %q", s.Content.Text)
	}
	// The turn after the compaction follows the last real node.
	if byID["e17"].Predecessor != "e13" {
		t.Errorf("e17 follows %q", byID["e17"].Predecessor)
	}
	for k, want := range map[[2]string]int{
		{"assistant.message", transcript.OutcomeImported}:          4, // the sub-agent's too
		{"session.usage_record", transcript.OutcomeMerged}:         4,
		{"session.usage_record", transcript.OutcomeSkipped}:        1, // call-4: no reply
		{"session.compaction_complete", transcript.OutcomeSkipped}: 1, // cancelled
		{"system.message", transcript.OutcomeMerged}:               1,
		{"subagent.started", transcript.OutcomeSkipped}:            1,
		{"subagent.completed", transcript.OutcomeSkipped}:          1,
	} {
		if c.Counts[k] != want {
			t.Errorf("%v: %d, want %d", k, c.Counts[k], want)
		}
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], ":29: the last line is incomplete") {
		t.Errorf("warnings %q", c.Warnings)
	}
}

// TestSessionFolder: session-state/<id>/ imports as its events.jsonl;
// a folder without one is refused.
func TestSessionFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "6f1c2d3e")
	os.MkdirAll(dir, 0o755)
	if copilot.DetectPath(dir) {
		t.Fatal("an empty folder detected")
	}
	if _, err := load(t, dir); err == nil {
		t.Fatal("an empty folder imported")
	}
	data, _ := os.ReadFile(fixture)
	os.WriteFile(filepath.Join(dir, "events.jsonl"), data, 0o644)
	if !copilot.DetectPath(dir) || copilot.DetectPath(filepath.Join(dir, "events.jsonl")) {
		t.Fatal("DetectPath")
	}
	c, err := load(t, dir)
	if err != nil || c.Head != "e20" {
		t.Fatalf("%v %+v", err, c)
	}
}

// TestRewind: what session.snapshot_rewind removed stays as a branch and
// the conversation continues from the message before it (the schema's
// rewind; the CLI's /rewind is interactive, so no recording has one).
func TestRewind(t *testing.T) {
	ev := func(typ, id, parent, data string) string {
		return `{"type":"` + typ + `","data":` + data + `,"id":"` + id + `","timestamp":"2026-01-01T00:00:00Z","parentId":"` + parent + `"}` + "\n"
	}
	log := ev("session.start", "e0", "", `{"sessionId":"s","producer":"copilot-agent","copilotVersion":"1.0.102"}`) +
		ev("user.message", "u1", "e0", `{"content":"one"}`) +
		ev("assistant.message", "a1", "u1", `{"messageId":"m1","content":"first"}`) +
		ev("user.message", "u2", "a1", `{"content":"two"}`) +
		ev("assistant.message", "a2", "u2", `{"messageId":"m2","content":"second"}`) +
		ev("session.snapshot_rewind", "r1", "a2", `{"upToEventId":"u2","eventsRemoved":2}`) +
		ev("user.message", "u3", "a1", `{"content":"three"}`) +
		ev("assistant.message", "a3", "u3", `{"messageId":"m3","content":"third"}`) +
		ev("session.snapshot_rewind", "r2", "a3", `{"upToEventId":"nothing-imported","eventsRemoved":1}`)
	c, _, err := loadLog(t, log)
	if err != nil {
		t.Fatal(err)
	}
	pred := map[string]string{}
	for _, n := range c.Nodes {
		pred[n.ID] = n.Predecessor
	}
	if len(c.Nodes) != 6 || pred["u2"] != "a1" || pred["u3"] != "a1" || pred["a3"] != "u3" || c.Head != "a3" {
		t.Fatalf("nodes %v head %q", pred, c.Head)
	}
	if c.Counts[[2]string{"session.snapshot_rewind", transcript.OutcomeMerged}] != 1 || len(c.Warnings) != 1 {
		t.Errorf("counts %v warnings %q", c.Counts, c.Warnings)
	}
}

func TestHostile(t *testing.T) {
	for name, body := range map[string]string{
		"not json":     "{\"type\":\"session.start\",\n",
		"no id":        `{"type":"user.message","data":{"content":"x"},"parentId":null}` + "\n",
		"repeated id":  `{"type":"user.message","data":{"content":"x"},"id":"a","parentId":null}` + "\n" + `{"type":"user.message","data":{"content":"y"},"id":"a","parentId":"a"}` + "\n",
		"bad data":     `{"type":"user.message","data":{"content":7},"id":"a","parentId":null}` + "\n",
		"call no id":   `{"type":"assistant.message","data":{"content":"","toolRequests":[{"name":"bash"}]},"id":"a","parentId":null}` + "\n",
		"torn only":    `{"type":"user.mess`,
		"empty":        "\n\n",
		"invalid utf8": "{\"type\":\"user.message\",\"data\":{\"content\":\"\xff\"},\"id\":\"a\",\"parentId\":null}\n",
	} {
		_, path, err := loadLog(t, body)
		var pe *transcript.ParseError
		if !errors.As(err, &pe) || pe.File != path {
			t.Errorf("%s: %v, want a parse error naming the file", name, err)
		}
	}
}

func TestFind(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "alt")
	for i, id := range []string{"older", "newer"} {
		p := filepath.Join(dir, "session-state", id, "events.jsonl")
		os.MkdirAll(filepath.Dir(p), 0o755)
		data, _ := os.ReadFile(fixture)
		os.WriteFile(p, data, 0o644)
		when := time.Date(2026, 1, 1+i, 0, 0, 0, 0, time.UTC)
		os.Chtimes(p, when, when)
	}
	os.MkdirAll(filepath.Join(dir, "session-state", "no-events"), 0o755)
	data, _ := os.ReadFile(fixture)
	os.WriteFile(filepath.Join(dir, "session-state", "legacy.jsonl"), data, 0o644)
	os.WriteFile(filepath.Join(dir, "session-state", "notes.txt"), data, 0o644)
	env := input.Env{Home: home, Getenv: func(k string) string {
		if k == "COPILOT_HOME" {
			return dir
		}
		return ""
	}}
	found, err := copilot.Find(env)
	if err != nil || len(found) != 3 {
		t.Fatalf("%v %+v", err, found)
	}
	sort.Slice(found, func(i, j int) bool { return found[i].Updated.After(found[j].Updated) })
	if f := found[2]; f.SessionID != "older" || f.File != filepath.Join(dir, "session-state", "older", "events.jsonl") {
		t.Errorf("%+v", f)
	}
	if f := found[0]; f.SessionID != "legacy" {
		t.Errorf("%+v", f)
	}
	if f := found[1]; f.SessionID != "newer" || f.Project != "/home/dev/app" || f.Model != "claude-sonnet-4.5" || f.Bytes == 0 {
		t.Errorf("%+v", f)
	}
	// Without COPILOT_HOME: ~/.copilot, absent here, is no error.
	if found, err := copilot.Find(input.Env{Home: home}); err != nil || len(found) != 0 {
		t.Errorf("%v %v", found, err)
	}
}

func FuzzImport(f *testing.F) {
	// The hand-written log: the recordings' system prompts (20 KB a line)
	// would slow the fuzzer to a crawl; TestOracle reads them whole.
	importtest.Fuzz(f, "../../", []string{fixture[6:]}, "events.jsonl", copilot.Import)
}
