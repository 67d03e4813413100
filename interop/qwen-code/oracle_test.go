// Package qwencode_test checks ctxfold against what the real Qwen Code
// 0.24.4 sent: the chat recordings and requests recorded by
// interop/qwen-code/record.sh (docs/INTEROP-qwen.md) are imported,
// verified, rendered at the point each request was made and compared with
// the request's messages. The committed recordings need no client;
// CTXFOLD_INTEROP_LIVE=1 re-records with the installed client
// (live_test.go).
package qwencode_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/interoptest"
	"github.com/ctxfold/ctxfold/transcript"
)

// The shared in-process runner and JSON difference (internal/interoptest).
var (
	ctxfold = interoptest.Ctxfold
)

const recordings = "../../testdata/interop/qwen-code/0.24.4"

var scenarios = []string{"chat", "tool", "turns", "compression", "compress", "subagent", "fork"}

// neverSent are the record types the client writes but never sends to the
// model (its SessionApiHistoryAccumulator reads only records with a
// message): the import may skip them, and nothing else.
var neverSent = map[string]bool{"system/ui_telemetry": true, "system/attribution_snapshot": true, "system/slash_command": true}

// compressed names the scenarios where the client compressed its history.
var compressed = map[string]bool{"compression": true, "compress": true}

// ctxfold runs one command line in-process.

type request struct {
	Seq  int    `json:"seq"`
	Kind string `json:"kind"`
	Body struct {
		Messages []json.RawMessage `json:"messages"`
	} `json:"body"`
}

func readRequests(t *testing.T, dir string) []request {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []request
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var r request
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// chatFile is the scenario's chat recording: the only one, or with a
// fork the longest (the fork copies the session's records, so it holds the
// answer to every request).
func chatFile(t *testing.T, dir string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "chats", "*.jsonl"))
	if len(files) == 0 {
		t.Fatalf("%s: no chat recording", dir)
	}
	best, size := "", int64(-1)
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && st.Size() > size {
			best, size = f, st.Size()
		}
	}
	return best
}

// answers lists the uuids of the assistant records in file order: the
// i-th answers the i-th turn request (the compression summarizer's
// request is answered by no record).
func answers(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r struct{ UUID, Type string }
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Type == "assistant" {
			out = append(out, r.UUID)
		}
	}
	return out
}

// predecessors maps each imported node to its predecessor, and reports
// whether a summary node (the client's compression) is among them.
func predecessors(t *testing.T, sess string) (map[string]string, bool) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(sess, "nodes.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	pred := map[string]string{}
	summary := false
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var n struct {
			ID          string  `json:"id"`
			Predecessor *string `json:"predecessor"`
			Metadata    struct{ Compaction bool }
		}
		if err := json.Unmarshal(line, &n); err != nil {
			t.Fatal(err)
		}
		if n.Predecessor != nil {
			pred[n.ID] = *n.Predecessor
		}
		summary = summary || n.Metadata.Compaction
	}
	return pred, summary
}

// message is a Chat Completions message after the oracle's normalisation
// (docs/INTEROP-qwen.md): its role, its text parts, its tool calls, the
// call a tool message answers.
type message struct {
	Role       string
	Texts      []string
	Calls      []string
	ToolCallID string
}

// normalise applies the documented rules to a list of messages: the
// system prompt and the <system-reminder> parts the client adds when it
// sends (neither is in the transcript) are dropped, text parts are
// compared as a list, and the summary node's prefix is removed.
func normalise(t *testing.T, raw []json.RawMessage) []message {
	t.Helper()
	var out []message
	for _, r := range raw {
		var m struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct{ Name, Arguments string }
			} `json:"tool_calls"`
			ToolCallID string `json:"tool_call_id"`
		}
		if err := json.Unmarshal(r, &m); err != nil {
			t.Fatal(err)
		}
		if m.Role == "system" {
			continue
		}
		n := message{Role: m.Role, ToolCallID: m.ToolCallID}
		var s string
		var parts []struct{ Type, Text string }
		switch {
		case json.Unmarshal(m.Content, &s) == nil:
			if s != "" {
				n.Texts = []string{s}
			}
		case json.Unmarshal(m.Content, &parts) == nil:
			for _, p := range parts {
				if !strings.HasPrefix(p.Text, "<system-reminder>") {
					n.Texts = append(n.Texts, p.Text)
				}
			}
		}
		for i, tx := range n.Texts {
			n.Texts[i] = strings.TrimPrefix(tx, transcript.SummaryPrefix)
		}
		for _, c := range m.ToolCalls {
			n.Calls = append(n.Calls, c.ID+" "+c.Function.Name+" "+c.Function.Arguments)
		}
		if m.Role == "user" && len(n.Texts) == 0 {
			continue
		}
		out = append(out, n)
	}
	return out
}

// A fork's file begins with the original session's records, uuids
// included: imported together they are two sessions, the fork's prefix
// the original's nodes.
func TestFork(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(recordings, "fork", "chats", "*.jsonl"))
	out := filepath.Join(t.TempDir(), "s")
	if _, errOut, code := ctxfold(t, append([]string{"import"}, append(files, "-o", out)...)...); code != 0 {
		t.Fatalf("import: exit %d: %s", code, errOut)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*", "nodes.jsonl"))
	if len(dirs) != 2 {
		t.Fatalf("sessions %v, want the original and the fork", dirs)
	}
	a, _ := os.ReadFile(dirs[0])
	b, _ := os.ReadFile(dirs[1])
	if len(a) > len(b) {
		a, b = b, a
	}
	if !bytes.HasPrefix(b, a) {
		t.Errorf("the fork does not continue the original's nodes")
	}
}

func TestOracle(t *testing.T) {
	for _, name := range scenarios {
		t.Run(name, func(t *testing.T) {
			checkScenario(t, filepath.Join(recordings, name), compressed[name])
		})
	}
}

// checkScenario imports one recording, verifies it and compares the
// render at each turn request's head with the request.
func checkScenario(t *testing.T, dir string, wantSummary bool) {
	t.Helper()
	file := chatFile(t, dir)
	sess := filepath.Join(t.TempDir(), "s")
	out, errOut, code := ctxfold(t, "import", "--json", file, "-o", sess)
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, errOut)
	}
	var rep struct {
		Records []struct {
			Record  string `json:"record"`
			Skipped int    `json:"skipped"`
		} `json:"records"`
		Warnings []any `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Records {
		if r.Skipped > 0 && !neverSent[r.Record] {
			t.Errorf("import skipped %d %q records, which the client sends", r.Skipped, r.Record)
		}
	}
	if len(rep.Warnings) > 0 {
		t.Errorf("import warnings: %v", rep.Warnings)
	}
	if out, errOut, code := ctxfold(t, "verify", "--strict", sess); code != 0 {
		t.Fatalf("verify --strict: exit %d: %s%s", code, out, errOut)
	}
	pred, summary := predecessors(t, sess)
	if summary != wantSummary {
		t.Fatalf("summary node imported: %v, want %v", summary, wantSummary)
	}
	byKind := map[string][]request{}
	for _, r := range readRequests(t, dir) {
		byKind[r.Kind] = append(byKind[r.Kind], r)
	}
	// The session's requests are answered by its chat recording's
	// assistant records, the sub-agents' by theirs.
	subs, _ := filepath.Glob(filepath.Join(dir, "subagents", "*", "agent-*.jsonl"))
	var subIDs []string
	for _, f := range subs {
		subIDs = append(subIDs, answers(t, f)...)
	}
	checkRequests(t, sess, pred, byKind["turn"], answers(t, file))
	checkRequests(t, sess, pred, byKind["subagent"], subIDs)
	if wantSummary {
		checkCompactionCommands(t, sess)
	}
}

// checkRequests compares each request with the render at the head of the
// assistant node that answers it.
func checkRequests(t *testing.T, sess string, pred map[string]string, reqs []request, ids []string) {
	t.Helper()
	if len(ids) != len(reqs) {
		t.Fatalf("%d assistant records, %d requests", len(ids), len(reqs))
	}
	for i, r := range reqs {
		head, ok := pred[ids[i]]
		if !ok {
			t.Fatalf("request %d: assistant %s not imported", r.Seq, ids[i])
		}
		out, errOut, code := ctxfold(t, "render", "--format", "openai", "--head", head, sess)
		if code != 0 {
			t.Fatalf("request %d: render --head %s: exit %d: %s", r.Seq, head, code, errOut)
		}
		var rendered []json.RawMessage
		if err := json.Unmarshal([]byte(out), &rendered); err != nil {
			t.Fatalf("request %d: render output: %v", r.Seq, err)
		}
		got, want := normalise(t, rendered), normalise(t, r.Body.Messages)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("request %d (head %s): render differs from the request\n got: %s\nwant: %s", r.Seq, head, show(got), show(want))
		}
	}
}

func show(ms []message) string {
	var sb strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&sb, "\n  %+q", m)
	}
	return sb.String()
}

// checkCompactionCommands: graph and audit see the compression as the
// session's active summary, written by the client, as they see the
// other clients'.
func checkCompactionCommands(t *testing.T, sess string) {
	t.Helper()
	out, errOut, code := ctxfold(t, "graph", "--json", sess)
	var g struct {
		ActiveSummaryID string `json:"active_summary_id"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &g) != nil || g.ActiveSummaryID == "" {
		t.Errorf("graph --json: exit %d, no active summary: %s", code, errOut)
	}
	out, errOut, code = ctxfold(t, "audit", "--json", sess)
	var a struct {
		Summaries []struct {
			CoveredNodes int    `json:"covered_nodes"`
			Source       string `json:"source"`
		} `json:"summaries"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &a) != nil || len(a.Summaries) != 1 || a.Summaries[0].CoveredNodes == 0 || a.Summaries[0].Source != "qwen-code" {
		t.Errorf("audit --json: exit %d, summaries %+v: %s", code, a.Summaries, errOut)
	}
}
