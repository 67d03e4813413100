package claudecode

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/transcript"
)

// Hand-written fixtures covering every feature (fixtures/import/claude-code).
var fixtureDir = filepath.Join("..", "..", "fixtures", "import", "claude-code")

func nodeByID(t *testing.T, s *memSink, id string) transcript.Node {
	t.Helper()
	for _, n := range s.nodes {
		if n.ID == id {
			return n
		}
	}
	t.Fatalf("no node %q", id)
	return transcript.Node{}
}

func hasNode(s *memSink, id string) bool { return s.ids[id] }

// spanIDs walks summary n's covers_span back over the handed-over nodes
// (docs/FORMAT.md §4), so a test sees every covered id in order.
func spanIDs(t *testing.T, s *memSink, n transcript.Node) []string {
	t.Helper()
	sp, ok := n.CoversSpan()
	if !ok {
		t.Fatalf("%s has no covers_span: %s", n.ID, n.Metadata)
	}
	ids := make([]string, sp.Count)
	x := sp.Last
	for k := sp.Count - 1; k >= 0; k-- {
		ids[k] = x
		x = nodeByID(t, s, x).Predecessor
	}
	if ids[0] != sp.First {
		t.Fatalf("%s: covers_span %+v walks back to %q", n.ID, sp, ids[0])
	}
	return ids
}

func TestFixtureSession(t *testing.T) {
	main := filepath.Join(fixtureDir, "sess-0001.jsonl")
	tgt, dirs := stored(t, main)
	if len(tgt.convs) != 1 || tgt.convs[0].name != "sess-0001" {
		t.Fatalf("conversations: %+v", tgt.convs)
	}
	s := tgt.convs[0]

	// Every line of the three files is counted once.
	lines := countLines(t, main) + countLines(t, filepath.Join(fixtureDir, "sess-0001", "subagents", "agent-sub1.jsonl")) +
		countLines(t, filepath.Join(fixtureDir, "sess-0001", "subagents", "agent-acompact-01.jsonl"))
	if s.lines != lines {
		t.Errorf("counted %d records, want %d", s.lines, lines)
	}
	if got := s.countOf("assistant", transcript.OutcomeMerged); got != 3 {
		t.Errorf("merged assistant lines = %d, want 3", got)
	}
	if got := s.countOf("user", transcript.OutcomeSkipped); got != 1 {
		t.Errorf("skipped user lines (repeated uuid) = %d, want 1", got)
	}
	for _, rec := range []string{"progress", "file-history-snapshot", "queue-operation", "summary", "system/turn_duration"} {
		if s.countOf(rec, transcript.OutcomeSkipped) == 0 {
			t.Errorf("no %s line counted as skipped", rec)
		}
	}

	// The streamed message a1..a4 is one node: thinking (with signature),
	// text, two calls; its results chain r1 → r2 though Claude Code hung
	// each from its own call's line.
	a := nodeByID(t, s, "a1")
	if hasNode(s, "a2") || hasNode(s, "a3") || hasNode(s, "a4") {
		t.Error("streamed lines imported as separate nodes")
	}
	var types []string
	for _, b := range a.Content.Blocks {
		types = append(types, b.Type)
	}
	if want := []string{"thinking", "text", "tool_call", "tool_call"}; !reflect.DeepEqual(types, want) {
		t.Errorf("merged blocks %v, want %v", types, want)
	}
	if a.Content.Blocks[0].Signature != "sigA" || a.Content.Blocks[0].Text != "The user wants a listing." {
		t.Errorf("thinking block %+v", a.Content.Blocks[0])
	}
	// Usage from the last line: input = 3 + 100 cached + 50 cache-written.
	if a.Usage == nil || a.Usage.InputTokens != 153 || a.Usage.CachedInputTokens != 100 || a.Usage.OutputTokens != 42 {
		t.Errorf("usage %+v", a.Usage)
	}
	if a.Predecessor != "u2" {
		t.Errorf("a1 predecessor %q, want u2", a.Predecessor)
	}
	if r1, r2 := nodeByID(t, s, "r1"), nodeByID(t, s, "r2"); r1.Predecessor != "a1" || r2.Predecessor != "r1" {
		t.Errorf("results chain: r1 ← %q, r2 ← %q", r1.Predecessor, r2.Predecessor)
	}
	// A turn after a skipped system line hangs from its nearest ancestor.
	if b1 := nodeByID(t, s, "b1"); b1.Predecessor != "r2" {
		t.Errorf("b1 predecessor %q, want r2 (through system line s1)", b1.Predecessor)
	}
	// The first user line's parent is a progress line: it becomes the root.
	if u1 := nodeByID(t, s, "u1"); u1.Predecessor != "" {
		t.Errorf("u1 predecessor %q, want root", u1.Predecessor)
	}

	// Images are references, never bytes.
	u1 := nodeByID(t, s, "u1")
	img := u1.Content.Blocks[1]
	if img.Type != transcript.BlockImage || img.MediaType != "image/png" || !strings.HasPrefix(img.Source, "sha256:") || string(img.Extra["bytes"]) != "8" {
		t.Errorf("image block %+v", img)
	}
	r2 := nodeByID(t, s, "r2")
	if len(r2.Content.Blocks) != 2 || r2.Content.Blocks[0].Text != "hello" || r2.Content.Blocks[1].Type != transcript.BlockImage {
		t.Errorf("tool result with an image: %+v", r2.Content.Blocks)
	}
	for _, n := range s.nodes {
		raw, _ := n.MarshalJSON()
		if strings.Contains(string(raw), "iVBORw0KGgo") {
			t.Errorf("node %s holds image bytes", n.ID)
		}
	}

	// The sub-agent file is a caller subtree of the Task call's node.
	for _, id := range []string{"g0", "g1", "g2", "g3"} {
		if n := nodeByID(t, s, id); n.Caller != "c1" {
			t.Errorf("%s caller %q, want c1", id, n.Caller)
		}
	}
	if g0 := nodeByID(t, s, "g0"); g0.Predecessor != "" {
		t.Errorf("g0 predecessor %q, want root", g0.Predecessor)
	}
	// The compaction summariser continues the main chain at d1.
	if k1 := nodeByID(t, s, "k1"); k1.Predecessor != "d1" || k1.Caller != "d1" {
		t.Errorf("k1 predecessor %q caller %q", k1.Predecessor, k1.Caller)
	}

	// Two compactions: the second covers everything the first did, plus
	// the turns after it.
	s1, s2 := nodeByID(t, s, "summary_cb1"), nodeByID(t, s, "summary_cb2")
	want1 := []string{"u1", "u2", "a1", "r1", "r2", "b1", "u3", "c1", "r3", "d1"}
	if got := spanIDs(t, s, s1); !reflect.DeepEqual(got, want1) {
		t.Errorf("first summary covers %v, want %v", got, want1)
	}
	want2 := append(append([]string{}, want1...), "u5", "e1", "r4", "e2")
	if got := spanIDs(t, s, s2); !reflect.DeepEqual(got, want2) {
		t.Errorf("second summary covers %v, want %v", got, want2)
	}
	if !strings.HasPrefix(s2.Content.Text, transcript.SummaryPrefix+"This session is being continued") || s2.Name != transcript.SummaryName {
		t.Errorf("summary content %q", s2.Content.Text)
	}
	if u5 := nodeByID(t, s, "u5"); u5.Predecessor != "d1" {
		t.Errorf("post-boundary u5 predecessor %q, want d1 (the last covered node)", u5.Predecessor)
	}
	if s.head != "f1" || s.model != "claude-opus-4-6" {
		t.Errorf("head %q model %q", s.head, s.model)
	}

	// render shows what the model saw after the second compaction; raw
	// shows every turn.
	if got := renderIDs(t, dirs["sess-0001"], false); !reflect.DeepEqual(got, []string{"summary_cb2", "u6", "f1"}) {
		t.Errorf("render %v", got)
	}
	wantRaw := append(append([]string{}, want2...), "u6", "f1")
	if got := renderIDs(t, dirs["sess-0001"], true); !reflect.DeepEqual(got, wantRaw) {
		t.Errorf("raw render %v, want %v", got, wantRaw)
	}
	c := independentCount(t, main, filepath.Join(fixtureDir, "sess-0001", "subagents", "agent-sub1.jsonl"),
		filepath.Join(fixtureDir, "sess-0001", "subagents", "agent-acompact-01.jsonl"))
	if got := importedCount(s.nodes); got != c {
		t.Errorf("imported %+v, independent count %+v", got, c)
	}
}

func TestFixtureInlineSidechains(t *testing.T) {
	dir := filepath.Join(fixtureDir, "inline")
	tgt, _ := stored(t, filepath.Join(dir, "sess-0002.jsonl"))
	if len(tgt.convs) != 1 {
		t.Fatalf("got %d conversations", len(tgt.convs))
	}
	s := tgt.convs[0]
	// agent-other.jsonl belongs to another session: never attached.
	if hasNode(s, "zz1") {
		t.Error("an agent file of another session was imported")
	}
	// Sidechains matched to their Task calls by prompt, whatever the order.
	for id, caller := range map[string]string{"x1": "w1", "x2": "w1", "o1": "w1", "o2": "w1"} {
		if n := nodeByID(t, s, id); n.Caller != caller {
			t.Errorf("%s caller %q, want %q", id, n.Caller, caller)
		}
	}
	// The orphan result is kept as text and flagged.
	y3 := nodeByID(t, s, "y3")
	if len(y3.ToolResults()) != 0 || !strings.Contains(y3.Content.PlainText(), "orphan output") {
		t.Errorf("orphan result: %+v", y3.Content)
	}
	if q1 := nodeByID(t, s, "q1"); q1.Predecessor != "" {
		t.Errorf("dangling parent: q1 predecessor %q, want root", q1.Predecessor)
	}
	wantWarn := map[string]bool{"missing-parent": false, "t9": false}
	for _, w := range s.warnings {
		for k := range wantWarn {
			if strings.Contains(w, k) {
				wantWarn[k] = true
			}
		}
	}
	for k, ok := range wantWarn {
		if !ok {
			t.Errorf("no warning about %s in %v", k, s.warnings)
		}
	}
	// Passing the agent file explicitly too imports it once.
	tgt2 := importMem(t, filepath.Join(dir, "sess-0002.jsonl"), filepath.Join(dir, "agent-old1.jsonl"))
	if len(tgt2.convs) != 1 || len(tgt2.convs[0].nodes) != len(s.nodes) {
		t.Errorf("explicit agent file: %d conversations", len(tgt2.convs))
	}
}

func TestAgentFileAlone(t *testing.T) {
	tgt, _ := stored(t, filepath.Join(fixtureDir, "inline", "agent-other.jsonl"))
	if len(tgt.convs) != 1 || tgt.convs[0].name != "sess-9999" || len(tgt.convs[0].nodes) != 1 {
		t.Fatalf("got %+v", tgt.convs)
	}
}

// TestSubagentFileAloneRecordsModel: a Claude Code 2.1 sub-agent file
// imported without its session file records the model of its assistant
// lines (estimate and compact need one); with the session file, the
// session's own model wins.
func TestSubagentFileAloneRecordsModel(t *testing.T) {
	line := func(typ, uuid, parent, model string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		msg := `{"role":"user","content":"do it"}`
		if typ == "assistant" {
			msg = `{"role":"assistant","id":"m-` + uuid + `","model":"` + model + `","content":[{"type":"text","text":"done"}]}`
		}
		return `{"type":"` + typ + `","uuid":"` + uuid + `","parentUuid":` + p + `,"sessionId":"s21","isSidechain":true,"agentId":"ab12","message":` + msg + "}\n"
	}
	dir := t.TempDir()
	agent := filepath.Join(dir, "s21", "subagents", "agent-ab12.jsonl")
	if err := os.MkdirAll(filepath.Dir(agent), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(agent, []byte(line("user", "u1", "", "")+line("assistant", "a1", "u1", "claude-haiku-4-5")), 0o644); err != nil {
		t.Fatal(err)
	}
	tgt := importMem(t, agent)
	if len(tgt.convs) != 1 || tgt.convs[0].model != "claude-haiku-4-5" {
		t.Fatalf("alone: %d conversations, model %q; want claude-haiku-4-5", len(tgt.convs), tgt.convs[0].model)
	}
	main := filepath.Join(dir, "s21.jsonl")
	mainLines := `{"type":"user","uuid":"m1","parentUuid":null,"sessionId":"s21","message":{"role":"user","content":"hi"}}` + "\n" +
		`{"type":"assistant","uuid":"m2","parentUuid":"m1","sessionId":"s21","message":{"role":"assistant","id":"mm2","model":"claude-opus-4-5","content":[{"type":"text","text":"hello"}]}}` + "\n"
	if err := os.WriteFile(main, []byte(mainLines), 0o644); err != nil {
		t.Fatal(err)
	}
	tgt = importMem(t, main, agent)
	if len(tgt.convs) != 1 || tgt.convs[0].model != "claude-opus-4-5" {
		t.Fatalf("with the session: %d conversations, model %q; want claude-opus-4-5", len(tgt.convs), tgt.convs[0].model)
	}
}

// TestEmptyAgentFileAlone: an empty sub-agent file given alone is refused
// like an empty session file.
func TestEmptyAgentFileAlone(t *testing.T) {
	path := writeTemp(t, "agent-x.jsonl", "")
	err := Import(context.Background(), []string{path}, Options{}, &memTarget{})
	var pe *transcript.ParseError
	if !errors.As(err, &pe) || pe.File != path || !strings.Contains(pe.Msg, "empty file") {
		t.Fatalf("got %v, want an empty-file ParseError naming %s", err, path)
	}
}

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMalformed(t *testing.T) {
	good := `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"hi"}}` + "\n"
	cases := []struct {
		name, content string
		opts          Options
		line          int
		msg           string
	}{
		{"bad json", good + "{not json}\n" + good, Options{}, 2, "invalid JSON"},
		{"not an object", good + "[1,2]\n", Options{}, 2, "expected a Claude Code record"},
		{"no uuid", good + `{"type":"user","message":{"role":"user","content":"x"}}` + "\n", Options{}, 2, "no uuid"},
		{"message not object", good + `{"type":"user","uuid":"u2","message":"x"}` + "\n", Options{}, 2, "expected a message object"},
		{"bad content", good + `{"type":"user","uuid":"u2","message":{"content":5}}` + "\n", Options{}, 2, "content"},
		{"uuid not string", good + `{"type":"user","uuid":7,"message":{"content":"x"}}` + "\n", Options{}, 2, `field "uuid"`},
		{"invalid utf-8", good + "{\"type\":\"user\",\"uuid\":\"u2\",\"message\":{\"content\":\"\xff\"}}\n", Options{}, 2, "invalid UTF-8"},
		{"empty file", "", Options{}, 1, "empty file; expected a Claude Code session"},
		{"blank lines only", "\n  \n", Options{}, 1, "empty file; expected a Claude Code session"},
		{"line too long", good + `{"type":"user","uuid":"u2","message":{"content":"` + strings.Repeat("x", 300) + `"}}` + "\n", Options{MaxLineBytes: 200}, 2, "longer than the 200-byte limit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeTemp(t, "s.jsonl", tc.content)
			err := Import(context.Background(), []string{path}, tc.opts, &memTarget{})
			var pe *transcript.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a *transcript.ParseError", err)
			}
			if pe.File != path || pe.Line != tc.line || !strings.Contains(pe.Msg, tc.msg) || strings.Contains(err.Error(), "\n") {
				t.Errorf("got %q (line %d), want %s:%d and %q on one line", err, pe.Line, path, tc.line, tc.msg)
			}
		})
	}
}

func TestCutLastLine(t *testing.T) {
	content := `{"type":"user","uuid":"u1","parentUuid":null,"message":{"role":"user","content":"hi"}}` + "\n" + `{"type":"assistant","uuid":"a1","parent`
	path := writeTemp(t, "s.jsonl", content)
	tgt := importMem(t, path)
	s := tgt.convs[0]
	if len(s.nodes) != 1 || s.lines != 2 || len(s.warnings) != 1 {
		t.Errorf("nodes %d, counted %d, warnings %v", len(s.nodes), s.lines, s.warnings)
	}
}

func TestHostileNames(t *testing.T) {
	for _, id := range []string{"../../etc/passwd", "..", ".", "a/b\\c", "", "/abs", strings.Repeat("x", 500), "a..b", "a...b"} {
		got := Sanitize(id)
		if got == "" || strings.Contains(got, "..") || strings.ContainsAny(got, `/\`) || strings.HasPrefix(got, ".") || len(got) > 100 {
			t.Errorf("Sanitize(%q) = %q", id, got)
		}
	}
	// A crafted session: its sessionId tries to climb out; the
	// conversation name stays a plain name.
	line := `{"type":"user","uuid":"summary_x","parentUuid":null,"sessionId":"../../outside","message":{"role":"user","content":"hi"}}` + "\n"
	tgt, _ := stored(t, writeTemp(t, "s.jsonl", line))
	c := tgt.convs[0]
	if strings.ContainsAny(c.name, `/\`) || strings.HasPrefix(c.name, ".") {
		t.Errorf("conversation name %q", c.name)
	}
	// A uuid in the summary id space is renamed, not refused.
	if c.nodes[0].ID == "summary_x" {
		t.Error("a user node kept a reserved summary_ id")
	}
}

func TestSidechainLookupStaysBesideInput(t *testing.T) {
	root := t.TempDir()
	in := filepath.Join(root, "in")
	line := func(uuid, parent, session string, side bool) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		sc := ""
		if side {
			sc = `,"isSidechain":true,"agentId":"x"`
		}
		return `{"type":"user","uuid":"` + uuid + `","parentUuid":` + p + `,"sessionId":"` + session + `"` + sc + `,"message":{"role":"user","content":"hi"}}` + "\n"
	}
	must := func(path, content string) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	must(filepath.Join(in, "s.jsonl"), line("m1", "", "s", false))
	// Same session id, but in the parent directory and in a sibling: not
	// beside the input, never read.
	must(filepath.Join(root, "agent-up.jsonl"), line("up", "", "s", true))
	must(filepath.Join(root, "other", "agent-side.jsonl"), line("side", "", "s", true))
	must(filepath.Join(in, "..", "s", "subagents", "agent-dotdot.jsonl"), line("dotdot", "", "s", true))
	// A symlink beside the input pointing elsewhere is not followed.
	if err := os.Symlink(filepath.Join(root, "agent-up.jsonl"), filepath.Join(in, "agent-link.jsonl")); err != nil {
		t.Fatal(err)
	}
	// Beside the input: read.
	must(filepath.Join(in, "agent-ok.jsonl"), line("ok", "", "s", true))
	must(filepath.Join(in, "s", "subagents", "agent-sub.jsonl"), line("sub", "", "s", true))
	tgt := importMem(t, filepath.Join(in, "s.jsonl"))
	s := tgt.convs[0]
	for _, id := range []string{"up", "side", "dotdot"} {
		if hasNode(s, id) {
			t.Errorf("read %s from outside the input's directory", id)
		}
	}
	for _, id := range []string{"ok", "sub"} {
		if !hasNode(s, id) {
			t.Errorf("did not read %s beside the input", id)
		}
	}
}

func TestDetect(t *testing.T) {
	yes := []string{
		`{"parentUuid":null,"isSidechain":false,"type":"user","uuid":"u1","sessionId":"s","message":{"role":"user","content":"hi"}}`,
		`{"type":"file-history-snapshot","messageId":"m","snapshot":{},"isSnapshotUpdate":false}` + "\n" + `{"parentUuid":null,"type":"user","uuid":"u1"`,
		`{"type":"summary","summary":"t","leafUuid":"x"}`,
		`{"type":"queue-operation","operation":"enqueue","sessionId":"s"}` + "\n",
		// How 2.1.328 starts a forked session (testdata/interop/claude-code/2.1.328/fork).
		`{"type":"mode","mode":"normal","sessionId":"s"}` + "\n",
		`{"type":"atis-latch","atis":"","sessionId":"s"}` + "\n",
		// A whole file Claude Code 2.1.2xx left with only its title
		// (hannibal8856/claude_backup, 8cfed5d8-….jsonl; titles shortened).
		`{"type":"ai-title","aiTitle":"t","sessionId":"s"}` + "\n" + `{"type":"agent-name","agentName":"t","sessionId":"s"}` + "\n",
		`{"type":"permission-mode","permissionMode":"default","sessionId":"s"}` + "\n",
		`{"type":"file-history-delta","messageId":"m"}` + "\n",
		`{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/w","sessionId":"s","version":"2.1.39","type":"user","message":{"role":"user","content":"a first line cut by the end of the he`,
	}
	no := []string{
		`{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}`,
		`{"sessionId":"s","projectHash":"h","startTime":"t"}` + "\n" + `{"id":"m1","type":"user","content":"hi"}`,
		`[{"mapping":{},"current_node":"x"}]`,
		`{"messages":[{"role":"user","content":"hi"}]}`,
		``,
	}
	for _, h := range yes {
		if !Detect([]byte(h)) {
			t.Errorf("Detect(%.60q) = false", h)
		}
	}
	for _, h := range no {
		if Detect([]byte(h)) {
			t.Errorf("Detect(%.60q) = true", h)
		}
	}
	data, err := os.ReadFile(filepath.Join(fixtureDir, "sess-0001.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !Detect(data[:300]) {
		t.Error("a cut head of a real-shaped session is not detected")
	}
}

// A pipe is read once into a temporary copy; errors still name it, and no
// sidechain file is looked for beside the copy.
func TestPipeInput(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fixtureDir, "inline", "sess-0002.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		w.Write(data)
		w.Close()
	}()
	defer r.Close()
	name := "/dev/fd/" + strconv.Itoa(int(r.Fd()))
	if _, err := os.Stat(name); err != nil {
		t.Skipf("no /dev/fd here: %v", err)
	}
	tgt := importMem(t, name)
	s := tgt.convs[0]
	if hasNode(s, "o1") || !hasNode(s, "q2") {
		t.Errorf("nodes: %d (sidechain file beside a pipe must not be read)", len(s.nodes))
	}
	for _, w := range s.warnings {
		if !strings.HasPrefix(w, name+":") {
			t.Errorf("warning names %q, want the pipe %s", w, name)
		}
	}
}
