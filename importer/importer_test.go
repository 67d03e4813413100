package importer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/store"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/internal/importtest"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/transcript"
	"github.com/ctxfold/ctxfold/verify"
)

const fixtures = "../fixtures/import/"

func run(t *testing.T, from, out string, files ...string) (*importer.Report, error) {
	t.Helper()
	return importer.Import(context.Background(), importer.Options{From: from, Files: files, Out: out})
}

// check verifies a session, renders it (and raw) and returns its counts.
func check(t *testing.T, dir string) (importtest.Stats, *dag.Graph) {
	t.Helper()
	res, err := verify.Dir(context.Background(), dir, store.OpenOptions{}, verify.Options{}, func(f verify.Finding) {
		t.Logf("%s: %v", dir, f)
	})
	if err != nil {
		t.Fatalf("%s: verify: %v", dir, err)
	}
	if !res.OK() {
		t.Fatalf("%s: verify found %d errors", dir, res.Errors)
	}
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	t.Cleanup(func() { g.S.Close() })
	for _, raw := range []bool{false, true} {
		v, err := render.Build(g, "", raw)
		if err != nil {
			t.Fatalf("%s: render: %v", dir, err)
		}
		if err := render.Write(&bytes.Buffer{}, v, render.FormatOpenAI); err != nil {
			t.Fatalf("%s: render: %v", dir, err)
		}
	}
	var nodes []transcript.Node
	for i := range g.S.Len() {
		n, err := g.S.Node(i)
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, *n)
	}
	return importtest.StatsOf(nodes), g
}

func TestFixtures(t *testing.T) {
	for _, tc := range []struct {
		file, format string
		sessions     int
		// Counted by hand from the fixture files.
		nodes, user, pairs int
	}{
		{"codex/rollout-compacted.jsonl", importer.Codex, 1, 14, 3, 4},
		{"codex/rollout-truncated.jsonl", importer.Codex, 1, 4, 1, 1},
		{"codex/rollout-bare-2025.jsonl", importer.Codex, 1, 5, 2, 1},
		{"gemini/session-rewind.jsonl", importer.Gemini, 1, 8, 3, 1},
		{"gemini/legacy.json", importer.Gemini, 1, 5, 1, 2},
		{"chatgpt/conversations.json", importer.ChatGPT, 2, 9, 3, 1},
		{"openai/messages.json", importer.OpenAI, 1, 5, 1, 1},
		{"openai/body.json", importer.OpenAI, 1, 4, 1, 0},
		{"anthropic/body.json", importer.Anthropic, 1, 6, 3, 1},
	} {
		t.Run(tc.file, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			rep, err := run(t, importer.Auto, out, fixtures+tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Format != tc.format || len(rep.Sessions) != tc.sessions {
				t.Fatalf("format %q, %d sessions", rep.Format, len(rep.Sessions))
			}
			var total importtest.Stats
			for _, s := range rep.Sessions {
				st, _ := check(t, s.Dir)
				if st.Nodes != s.Nodes {
					t.Errorf("%s: report says %d nodes, session holds %d", s.Dir, s.Nodes, st.Nodes)
				}
				total.Nodes += st.Nodes
				total.User += st.User
				total.Calls += st.Calls
				total.Results += st.Results
			}
			if total.Nodes != tc.nodes || total.User != tc.user || total.Results != tc.pairs {
				t.Errorf("nodes %d user %d pairs %d, want %d %d %d", total.Nodes, total.User, total.Results, tc.nodes, tc.user, tc.pairs)
			}
		})
	}
}

// codexCount is an independent count of a rollout: user turns, tool pairs
// (calls made) and nodes (inputs + outputs of tools + one assistant node
// per run of model output items + one summary per compaction).
func codexCount(t *testing.T, path string) (nodes, user, pairs, summaries int) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	prevOutput := false
	for _, line := range bytes.Split(data, []byte("\n")) {
		var rec struct {
			Type    string `json:"type"`
			Payload struct {
				Type string `json:"type"`
				Role string `json:"role"`
				Base struct {
					Text string `json:"text"`
				} `json:"base_instructions"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &rec) != nil {
			continue
		}
		if rec.Type == "session_meta" && rec.Payload.Base.Text != "" && nodes == 0 {
			nodes++ // the base instructions, the first developer message sent
			continue
		}
		if rec.Type == "compacted" {
			summaries++
			prevOutput = false
			continue
		}
		if rec.Type != "response_item" {
			continue
		}
		p := rec.Payload
		switch {
		case p.Type == "message" && p.Role == "user":
			user++
			nodes++
			prevOutput = false
		case p.Type == "message" && p.Role != "assistant", p.Type == "function_call_output", p.Type == "custom_tool_call_output":
			nodes++
			prevOutput = false
		case p.Type == "message", p.Type == "reasoning", p.Type == "function_call", p.Type == "custom_tool_call", p.Type == "web_search_call":
			if p.Type == "function_call" || p.Type == "custom_tool_call" {
				pairs++
			}
			if !prevOutput {
				nodes++
			}
			prevOutput = true
		}
	}
	return nodes + summaries, user, pairs, summaries
}

func TestExternal(t *testing.T) {
	external := sessiontest.External(t)
	codexFiles, _ := filepath.Glob(filepath.Join(external, "codex", "*", "*.jsonl"))
	type want struct {
		nodes, user, pairs, summaries, tips int
	}
	cases := map[string]want{
		// Read by hand: a user line, a gemini message with one answered
		// call, a final gemini message.
		"gemini-cli/jazzyalex-agent-sessions/jsonl_v040.jsonl": {4, 1, 1, 0, 1},
		// m1, m2 (+ result), m2b (+ result), m4, m5, m6; the info m3 is a notice.
		"gemini-cli/jazzyalex-agent-sessions/large.json": {8, 2, 2, 0, 1},
		// 6 messages; msg-3 has two children.
		"chatgpt-export/mitkury-chatgpt-export-parser/example-conversation.json": {6, 3, 0, 0, 2},
	}
	for _, f := range codexFiles {
		n, u, p, s := codexCount(t, f)
		rel, _ := filepath.Rel(external, f)
		cases[rel] = want{n, u, p, s, 1}
	}
	if len(codexFiles) != 2 {
		t.Errorf("expected 2 Codex rollouts in %s, found %d", external, len(codexFiles))
	}
	for rel, w := range cases {
		t.Run(rel, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "s")
			rep, err := run(t, importer.Auto, out, filepath.Join(external, rel))
			if err != nil {
				t.Fatal(err)
			}
			st, g := check(t, out)
			got := want{st.Nodes, st.User, st.Results, st.Summaries, len(g.Tips())}
			if got != w {
				t.Fatalf("got %+v, want %+v (report %+v)", got, w, rep.Records)
			}
			if st.Calls != st.Results {
				t.Errorf("%d calls, %d results", st.Calls, st.Results)
			}
			if w.summaries > 0 {
				checkCompacted(t, g)
			}
		})
	}
}

// checkCompacted: render starts with the summary (after the system prompt
// the client recorded, which is never covered) and goes on with the turns
// after the compaction; render --raw holds every covered turn.
func checkCompacted(t *testing.T, g *dag.Graph) {
	t.Helper()
	v, err := render.Build(g, "", false)
	if err != nil {
		t.Fatal(err)
	}
	ids := v.IDs()
	// Codex rollouts with base instructions keep them in front (node 1).
	first := ids[0]
	if strings.HasSuffix(first, "-1") && len(ids) > 1 {
		first = ids[1]
	}
	if !strings.HasPrefix(first, transcript.SummaryIDPrefix) || !v.Summarized() {
		t.Fatalf("render does not start with the summary: %v", ids[:3])
	}
	raw, err := render.Build(g, "", true)
	if err != nil {
		t.Fatal(err)
	}
	rawIDs := map[string]bool{}
	for _, id := range raw.IDs() {
		rawIDs[id] = true
	}
	covers := g.CoverIDs(g.ActiveSummary())
	for _, id := range covers {
		if !rawIDs[id] {
			t.Fatalf("render --raw lacks covered node %q", id)
		}
	}
	if len(raw.IDs()) != len(v.IDs())-1+len(covers) {
		t.Errorf("raw %d ids, rendered %d, covered %d", len(raw.IDs()), len(ids), len(covers))
	}
}

func TestExternalClaudeCode(t *testing.T) {
	external := sessiontest.External(t)
	// Tool pairs from the fixtures' MANIFEST.md; the node shapes are the
	// claudecode package's own tests.
	for file, pairs := range map[string]int{
		"d-kimuson-claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl": 12,
		"d-kimuson-claude-code-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl": 21,
	} {
		out := filepath.Join(t.TempDir(), "s")
		rep, err := run(t, importer.Auto, out, filepath.Join(external, "claude-code", file))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Format != importer.ClaudeCode {
			t.Fatalf("%s detected as %s", file, rep.Format)
		}
		if st, _ := check(t, out); st.Results != pairs {
			t.Errorf("%s: %d tool pairs, want %d", file, st.Results, pairs)
		}
	}
}

func TestDetect(t *testing.T) {
	for file, want := range map[string]string{
		"codex/rollout-compacted.jsonl": importer.Codex, "gemini/session-rewind.jsonl": importer.Gemini,
		"gemini/legacy.json": importer.Gemini, "chatgpt/conversations.json": importer.ChatGPT,
		"openai/messages.json": importer.OpenAI, "openai/body.json": importer.OpenAI,
		"anthropic/body.json": importer.Anthropic, "claude-code/sess-0001.jsonl": importer.ClaudeCode,
		"../../format/aider/testdata/.aider.chat.history.md": importer.Aider,
		"../../format/cline/testdata/tasks":                  importer.Cline,
		"../../format/cline/testdata/tasks/1750000000000":    importer.Cline,
	} {
		got, err := importer.DetectFile(fixtures + file)
		if err != nil || got != want {
			t.Errorf("%s: detected %q (%v), want %q", file, got, err, want)
		}
	}
	path := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(path, []byte("just some text\n"), 0o644)
	var pe *transcript.ParseError
	if _, err := importer.DetectFile(path); !errors.As(err, &pe) || !strings.Contains(pe.Msg, "not a supported export") || !strings.Contains(hint(err), "--from") {
		t.Errorf("undetectable file: %v", err)
	}
}

// tree lists every path under root, relative, sorted.
func tree(t *testing.T, root string) []string {
	var out []string
	filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel != "." {
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func TestCraftedExportStaysInsideOut(t *testing.T) {
	root := t.TempDir()
	in := filepath.Join(root, "in")
	os.Mkdir(in, 0o755)
	var convs []map[string]any
	for _, id := range []string{"../../../evil", "/etc/cron.d/x", "..", "a/b\\c", ".hidden", "", "ok"} {
		convs = append(convs, map[string]any{"id": id, "title": "../../title-escape", "current_node": "m",
			"mapping": map[string]any{"m": map[string]any{"id": "m", "parent": nil, "children": []string{},
				"message": map[string]any{"author": map[string]any{"role": "user"}, "content": map[string]any{"content_type": "text", "parts": []string{"hi"}}}}}})
	}
	data, _ := json.Marshal(convs)
	file := filepath.Join(in, "conversations.json")
	os.WriteFile(file, data, 0o644)
	out := filepath.Join(root, "work", "out")
	rep, err := run(t, importer.Auto, out, file)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sessions) != 7 {
		t.Fatalf("%d sessions", len(rep.Sessions))
	}
	for _, p := range tree(t, root) {
		if p == "in" || p == filepath.Join("in", "conversations.json") || p == "work" || p == filepath.Join("work", "out") {
			continue
		}
		rel, err := filepath.Rel(out, filepath.Join(root, p))
		if err != nil || strings.HasPrefix(rel, "..") {
			t.Errorf("wrote outside -o: %s", p)
		}
	}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		name := e.Name()
		if strings.Contains(name, "..") || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") || strings.Contains(name, "title") {
			t.Errorf("unsafe session name %q", name)
		}
		if _, err := os.Stat(filepath.Join(out, name, store.MetaFile)); err != nil {
			t.Errorf("%s is not a session", name)
		}
	}
	if len(entries) != 7 {
		t.Errorf("%d entries in -o", len(entries))
	}
}

func TestSafeName(t *testing.T) {
	for in, want := range map[string]string{"../../x": "____x", "a/b": "a_b", "..": "", "...": "_.", ".x": "x", "conv-1_2.3": "conv-1_2.3", "//": ""} {
		if got := importer.SafeName(in); got != want {
			t.Errorf("SafeName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFailureLeavesNothing(t *testing.T) {
	long := filepath.Join(t.TempDir(), "long.jsonl")
	good, _ := os.ReadFile(fixtures + "codex/rollout-compacted.jsonl")
	lines := bytes.SplitAfter(good, []byte("\n"))
	// A valid start, then a line over the limit: the import fails after
	// writing nodes, and the half-written session must not survive.
	bad := append(bytes.Join(lines[:20], nil), append([]byte(`{"type":"response_item","payload":{"type":"message","role":"user","content":"`+strings.Repeat("x", 5000)), []byte("\"}}\n")...)...)
	os.WriteFile(long, bad, 0o644)
	for _, tc := range []struct {
		file string
		max  int
		msg  string
	}{
		{fixtures + "codex/malformed.jsonl", 0, "malformed.jsonl:3:"},
		{fixtures + "gemini/malformed.jsonl", 0, "malformed.jsonl:3:"},
		{fixtures + "chatgpt/malformed.json", 0, "malformed.json:6:"},
		{fixtures + "openai/malformed.json", 0, "malformed.json:35:"},
		{fixtures + "anthropic/malformed.json", 0, "malformed.json:15:"},
		{long, 4096, "long.jsonl:21: line is longer than the 4096-byte limit"},
	} {
		parent := t.TempDir()
		out := filepath.Join(parent, "s")
		_, err := importer.Import(context.Background(), importer.Options{Files: []string{tc.file}, Out: out, Input: inputOpts(tc.max), Chunk: 2})
		var pe *transcript.ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: err %v, want a parse error containing %q", tc.file, err, tc.msg)
		}
		if left := tree(t, parent); len(left) != 0 {
			t.Errorf("%s: a failed import left %v", tc.file, left)
		}
	}
}

func TestRefuseAndAppend(t *testing.T) {
	out := filepath.Join(t.TempDir(), "s")
	full := fixtures + "codex/rollout-compacted.jsonl"
	data, _ := os.ReadFile(full)
	lines := bytes.SplitAfter(data, []byte("\n"))
	part := filepath.Join(t.TempDir(), "rollout-compacted.jsonl")
	os.WriteFile(part, bytes.Join(lines[:17], nil), 0o644)
	first, err := run(t, importer.Codex, out, part)
	if err != nil {
		t.Fatal(err)
	}
	var exists *importer.ExistsError
	if _, err := run(t, importer.Codex, out, full); !errors.As(err, &exists) {
		t.Fatalf("overwrite not refused: %v", err)
	}
	// The rollout grew: --append adds only the new nodes.
	rep, err := importer.Import(context.Background(), importer.Options{From: importer.Codex, Files: []string{full}, Out: out, Append: true})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Sessions[0]
	if !s.Appended || s.AlreadyPresent != first.Sessions[0].Nodes || s.AlreadyPresent+s.Nodes != 14 || s.Head != "cx0000c0de-38" {
		t.Fatalf("append: %+v (first import wrote %d)", s, first.Sessions[0].Nodes)
	}
	st, g := check(t, out)
	if st.Nodes != 14 {
		t.Fatalf("%d nodes after append", st.Nodes)
	}
	checkCompacted(t, g)
	// A failing --append commits nothing of the chunk in hand and leaves
	// HEAD where it was.
	grown := filepath.Join(t.TempDir(), "rollout-compacted.jsonl")
	extra := `{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":"more"}}` + "\n{broken\n"
	os.WriteFile(grown, append(append([]byte(nil), data...), extra...), 0o644)
	if _, err := importer.Import(context.Background(), importer.Options{From: importer.Codex, Files: []string{grown}, Out: out, Append: true}); err == nil {
		t.Fatal("a malformed line was accepted")
	}
	if st, g := check(t, out); st.Nodes != 14 || g.ID(g.Head()) != "cx0000c0de-38" {
		t.Fatalf("a failed append changed the session: %d nodes, HEAD %s", st.Nodes, g.ID(g.Head()))
	}
	// Appending the same file again is a no-op.
	rep, err = importer.Import(context.Background(), importer.Options{From: importer.Codex, Files: []string{full}, Out: out, Append: true})
	if err != nil || rep.Sessions[0].Nodes != 0 || rep.Sessions[0].AlreadyPresent != 14 {
		t.Fatalf("re-append: %v %+v", err, rep)
	}
}

func TestChunkedAppendsMatchOne(t *testing.T) {
	var want []byte
	for _, chunk := range []int{5000, 3, 1} {
		out := filepath.Join(t.TempDir(), "s")
		_, err := importer.Import(context.Background(), importer.Options{Files: []string{fixtures + "chatgpt/conversations.json"}, Out: out, Chunk: chunk})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(filepath.Join(out, "conv-primes-0001", store.NodesFile))
		if want == nil {
			want = got
		} else if !bytes.Equal(got, want) {
			t.Errorf("chunk %d wrote different nodes", chunk)
		}
		check(t, filepath.Join(out, "conv-primes-0001"))
	}
}

func ExampleImport() {
	out, _ := os.MkdirTemp("", "ctxfold-example-")
	defer os.RemoveAll(out)
	rep, err := importer.Import(context.Background(), importer.Options{
		Files: []string{"../fixtures/import/anthropic/body.json"},
		Out:   filepath.Join(out, "s"),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rep.Format, rep.Sessions[0].Nodes, "nodes, HEAD", rep.Sessions[0].Head)
	for _, r := range rep.Records {
		fmt.Println(r.Record, r.Imported, r.Merged, r.Skipped)
	}
	// Output:
	// anthropic 6 nodes, HEAD m5-25c61a73
	// body/max_tokens 0 0 1
	// body/model 0 1 0
	// body/system 1 0 0
	// message/assistant 2 0 0
	// message/user 3 0 0
}

func TestAppendOtherConversation(t *testing.T) {
	out := filepath.Join(t.TempDir(), "s")
	if _, err := run(t, importer.Auto, out, fixtures+"anthropic/body.json"); err != nil {
		t.Fatal(err)
	}
	// Bodies carry no ids: theirs hash the messages, so another body's
	// messages are new nodes, not mistaken for the ones already there.
	rep, err := importer.Import(context.Background(), importer.Options{Files: []string{fixtures + "openai/messages.json"}, Out: out, Append: true})
	if err != nil {
		t.Fatal(err)
	}
	if s := rep.Sessions[0]; s.Nodes != 5 || s.AlreadyPresent != 0 || !strings.HasPrefix(s.Head, "m5-") {
		t.Fatalf("%+v", s)
	}
	if st, _ := check(t, out); st.Nodes != 11 {
		t.Fatalf("%d nodes", st.Nodes)
	}
}

func TestAppendGrownRollout(t *testing.T) {
	out := filepath.Join(t.TempDir(), "s")
	cut := fixtures + "codex/rollout-truncated.jsonl"
	if _, err := run(t, importer.Codex, out, cut); err != nil {
		t.Fatal(err)
	}
	// The writer went on: the torn line is complete and an answer follows.
	data, _ := os.ReadFile(cut)
	grown := filepath.Join(t.TempDir(), "rollout.jsonl")
	os.WriteFile(grown, append(data, []byte(`ut":"42 main.go"}}
{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"main.go has 42 lines."}]}}
`)...), 0o644)
	rep, err := importer.Import(context.Background(), importer.Options{From: importer.Codex, Files: []string{grown}, Out: out, Append: true})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Sessions[0]
	if s.Nodes != 2 || s.AlreadyPresent != 4 || s.Head != "cx000f00d5-12" {
		t.Fatalf("%+v", s)
	}
	// The stored request was flagged unanswered; the grown file answers it:
	// the stored node is kept, and the difference reported.
	if !strings.Contains(strings.Join(rep.Warnings, "\n"), `1 node(s) already in the session differ from the import and were kept as stored (first "cx000f00d5-10")`) {
		t.Errorf("warnings %q", rep.Warnings)
	}
	check(t, out)
}

// TestRecordedWindowKey: the importer writes the key estimate reads.
func TestRecordedWindowKey(t *testing.T) {
	if importer.RecordedWindowKey != estimate.RecordedWindowKey {
		t.Fatalf("importer writes %q, estimate reads %q", importer.RecordedWindowKey, estimate.RecordedWindowKey)
	}
	if importer.RecordedWindowSourceKey != estimate.RecordedWindowSourceKey || importer.WindowFromClientConfig != estimate.WindowFromClientConfig {
		t.Fatalf("importer writes %q: %q, estimate reads %q: %q", importer.RecordedWindowSourceKey, importer.WindowFromClientConfig,
			estimate.RecordedWindowSourceKey, estimate.WindowFromClientConfig)
	}
}

// TestRootsInsideAChunk: a session of several roots is one chunk (a root
// is marked as one within the batch instead of opening an append of its
// own) and is stored as node by node appends store it.
func TestRootsInsideAChunk(t *testing.T) {
	var want []byte
	for _, chunk := range []int{1, 5000} {
		out := filepath.Join(t.TempDir(), "s")
		if _, err := importer.Import(context.Background(), importer.Options{Files: []string{fixtures + "claude-code/sess-0001.jsonl"}, Out: out, Chunk: chunk}); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(out, store.NodesFile))
		if err != nil {
			t.Fatal(err)
		}
		if roots := bytes.Count(got, []byte(`"predecessor":null`)); roots < 2 {
			t.Fatalf("the fixture imports to %d roots; the test needs several", roots)
		}
		if want == nil {
			want = got
		} else if !bytes.Equal(got, want) {
			t.Errorf("chunk %d stored the roots differently:\n%s\nwant\n%s", chunk, got, want)
		}
		check(t, out)
	}
}

// TestRewindToWithoutTheSession: a cut that has no session to cut (the
// cache session is gone) is a resume point that no longer applies — not a
// new session of only the nodes after the point.
func TestRewindToWithoutTheSession(t *testing.T) {
	out := filepath.Join(t.TempDir(), "s")
	_, err := importer.Import(context.Background(), importer.Options{Files: []string{fixtures + "claude-code/sess-0001.jsonl"},
		Out: out, Append: true, RewindTo: &store.Meta{}})
	if !errors.Is(err, input.ErrCannotResume) {
		t.Fatalf("RewindTo with no session at %s: %v, want input.ErrCannotResume", out, err)
	}
	if _, serr := os.Stat(out); !os.IsNotExist(serr) {
		t.Fatalf("%s was written: %v", out, serr)
	}
}

// A resumed import (a saved state) without the checkpoint to cut the
// session back to is refused before anything is written: it would append
// the nodes after the resume point to whatever the session holds.
func TestResumeStateNeedsRewindTo(t *testing.T) {
	out := filepath.Join(t.TempDir(), "s")
	_, err := importer.Import(context.Background(), importer.Options{Files: []string{fixtures + "claude-code/sess-0001.jsonl"},
		Out: out, Append: true, Resume: &input.Resume{State: []byte("state")}})
	if err == nil || !strings.Contains(err.Error(), "RewindTo") {
		t.Fatalf("a saved state without RewindTo: %v, want a refusal", err)
	}
	if _, serr := os.Stat(out); !os.IsNotExist(serr) {
		t.Fatalf("%s was written: %v", out, serr)
	}
}
