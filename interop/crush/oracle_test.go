// Package crush_test checks ctxfold against what the real Crush sent: the
// sessions recorded by interop/crush/record.sh (docs/INTEROP-crush.md) —
// the tables of the project's .crush/crush.db — are imported, verified,
// rendered at the point each request was made and compared with the
// request's messages. The committed recordings need no client;
// CTXFOLD_INTEROP_LIVE=1 re-records with the built client first
// (live_test.go).
package crush_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/ctxfold/ctxfold/internal/interoptest"
	"github.com/ctxfold/ctxfold/transcript"
)

// Versions are the recorded versions of Crush the oracle runs on; the
// first is the pinned one record.sh builds.
var Versions = []string{"0.90.0"}

// scenarios record.sh records.
var scenarios = []string{"chat", "tool", "compaction", "compaction-twice", "subagent", "anthropic"}

// wireOf is the wire format of a scenario's requests: the anthropic
// scenario ran against the fake Anthropic provider (Messages), the others
// against the fake OpenAI one (Chat Completions).
func wireOf(dir string) string {
	if filepath.Base(dir) == "anthropic" {
		return "anthropic"
	}
	return "openai"
}

// todoReminder is the user message Crush puts first in every request of
// the main agent (its preparePrompt) and never stores: the oracle tells
// the main agent's requests by it and drops it before comparing.
const todoReminder = "<system_reminder>This is a reminder that your todo list is currently empty. DO NOT mention this to the user explicitly because they are already aware.\n" +
	"If you are working on tasks that would benefit from a todo list please use the \"todos\" tool to create one.\n" +
	"If not, please feel free to ignore. Again do not mention this message to the user.</system_reminder>"

// summaryPrompt is the last user message of Crush's summarize request.
const summaryPrompt = "Provide a detailed summary of our conversation above."

type request struct {
	Seq  int    `json:"seq"`
	Kind string `json:"kind"`
	Body struct {
		Messages []map[string]any `json:"messages"`
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

// buildDB loads the recorded tables (db.sql) into a fresh database named
// as Crush names its own (.crush/crush.db).
func buildDB(t *testing.T, dir string) string {
	t.Helper()
	script, err := os.ReadFile(filepath.Join(dir, "db.sql"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), ".crush", "crush.db")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("PRAGMA journal_mode=WAL"); err != nil { // as Crush opens it
		t.Fatal(err)
	}
	if _, err := db.Exec(string(script)); err != nil {
		t.Fatalf("db.sql: %v", err)
	}
	return path
}

type node struct {
	ID          string  `json:"id"`
	Role        string  `json:"role"`
	Predecessor *string `json:"predecessor"`
	Caller      string  `json:"caller"`
	ToolCalls   []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"tool_calls"`
	Metadata struct {
		Compaction bool `json:"compaction"`
		// The store writes a contiguous covers_ids as its span.
		Span struct {
			First string `json:"first"`
			Last  string `json:"last"`
			Count int    `json:"count"`
		} `json:"covers_span"`
	} `json:"metadata"`
}

func readNodes(t *testing.T, sess string) []node {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(sess, "nodes.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []node
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var n node
		if err := json.Unmarshal(line, &n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// importChecked imports the database (auto-detected), checks that it is
// Crush's and that no record was skipped (every part of a real recording
// is sent or is bookkeeping), and verifies the session.
func importChecked(t *testing.T, db string, extra ...string) string {
	t.Helper()
	sess := filepath.Join(t.TempDir(), "s")
	out := interoptest.Must(t, append([]string{"import", "--json", db, "-o", sess}, extra...)...)
	var rep struct {
		Format  string `json:"format"`
		Records []struct {
			Record  string `json:"record"`
			Skipped int    `json:"skipped"`
		} `json:"records"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("import --json: %v\n%s", err, out)
	}
	if rep.Format != "crush" {
		t.Errorf("%s: detected %q, want crush", db, rep.Format)
	}
	for _, r := range rep.Records {
		if r.Skipped > 0 {
			t.Errorf("import skipped %d %s record(s)", r.Skipped, r.Record)
		}
	}
	interoptest.Must(t, "verify", "--strict", sess)
	return sess
}

// normalize applies the rules of docs/INTEROP-crush.md to a message
// list: the system message (Crush keeps no system prompt in its database)
// and the todo reminder of a main session's request are dropped, an
// assistant message that only calls tools has no content (Crush sends
// none, render null), and the summary node's "[Previous conversation
// summary]" line is dropped (Crush sends the summary's text alone).
func normalize(wire string, msgs []map[string]any) []map[string]any {
	if wire == "anthropic" {
		return normalizeAnthropic(msgs)
	}
	var out []map[string]any
	for _, m := range msgs {
		if m["role"] == "system" {
			continue
		}
		if len(out) == 0 && m["role"] == "user" && m["content"] == todoReminder {
			continue
		}
		if m["role"] == "assistant" && m["tool_calls"] != nil && (m["content"] == nil || m["content"] == "") {
			delete(m, "content")
		}
		if s, ok := m["content"].(string); ok && m["role"] == "user" {
			m["content"] = strings.TrimPrefix(s, transcript.SummaryPrefix)
		}
		out = append(out, m)
	}
	return out
}

// normalizeAnthropic is normalize for Anthropic Messages: the todo
// reminder is the first text block of the first user message there, the
// cache_control markers Crush sets are dropped, and a tool result's
// content of one text block is that text (render sends a string).
func normalizeAnthropic(msgs []map[string]any) []map[string]any {
	for i, m := range msgs {
		blocks, _ := m["content"].([]any)
		var kept []any
		for j, b := range blocks {
			bm, _ := b.(map[string]any)
			delete(bm, "cache_control")
			if i == 0 && j == 0 && bm["type"] == "text" && bm["text"] == todoReminder {
				continue
			}
			if c, ok := bm["content"].([]any); ok && bm["type"] == "tool_result" && len(c) == 1 {
				if cm, _ := c[0].(map[string]any); cm["type"] == "text" {
					bm["content"] = cm["text"]
				}
			}
			if t, ok := bm["text"].(string); ok && m["role"] == "user" {
				bm["text"] = strings.TrimPrefix(t, transcript.SummaryPrefix)
			}
			kept = append(kept, bm)
		}
		if blocks != nil {
			m["content"] = kept
		}
	}
	return msgs
}

// mainAgent reports whether a request is the main agent's: Crush sends its
// todo reminder first (after the system prompt) there, never to a
// sub-agent.
func mainAgent(r request) bool {
	for _, m := range r.Body.Messages {
		if m["role"] == "system" {
			continue
		}
		if blocks, ok := m["content"].([]any); ok && len(blocks) > 0 { // Anthropic
			b, _ := blocks[0].(map[string]any)
			return m["role"] == "user" && b["text"] == todoReminder
		}
		return m["role"] == "user" && m["content"] == todoReminder
	}
	return false
}

// sessionRow is one row of the recorded sessions table.
type sessionRow struct{ id, parent string }

// listSessions lists the database's sessions in Crush's order.
func listSessions(t *testing.T, db string) []sessionRow {
	t.Helper()
	h, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	rows, err := h.Query(`SELECT id, COALESCE(parent_session_id, '') FROM sessions ORDER BY created_at, rowid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []sessionRow
	for rows.Next() {
		var s sessionRow
		if err := rows.Scan(&s.id, &s.parent); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func render(t *testing.T, wire, sess, head string, raw bool) []map[string]any {
	t.Helper()
	args := []string{"render", sess, "--head", head, "--format", wire}
	if raw {
		args = append(args, "--raw")
	}
	out := interoptest.Must(t, args...)
	var got []map[string]any
	if wire == "anthropic" { // {"messages": […]} beside system and tools
		var body struct {
			Messages []map[string]any `json:"messages"`
		}
		if err := json.Unmarshal([]byte(out), &body); err != nil {
			t.Fatalf("render: %v\n%s", err, out)
		}
		return body.Messages
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("render: %v\n%s", err, out)
	}
	return got
}

// TestOracle imports every committed recording of every version and
// compares render with each request Crush sent.
func TestOracle(t *testing.T) {
	n := 0
	for _, v := range Versions {
		for _, sc := range scenarios {
			dir := filepath.Join("../../testdata/interop/crush", v, sc)
			if _, err := os.Stat(dir); err != nil {
				continue
			}
			n++
			t.Run(v+"/"+sc, func(t *testing.T) { oracle(t, dir) })
		}
	}
	if n == 0 {
		t.Fatal("no recording")
	}
}

func oracle(t *testing.T, dir string) {
	db := buildDB(t, dir)
	// The main agent's requests belong to a top-level session, a
	// sub-agent's to its session, which imports as a caller subtree of
	// the node holding its call (sub-agents in creation order).
	var mains, subs, summarize []request
	for _, r := range readRequests(t, dir) {
		switch {
		case r.Kind == "summarize":
			summarize = append(summarize, r)
		case r.Kind == "main" && mainAgent(r):
			mains = append(mains, r)
		case r.Kind == "main":
			subs = append(subs, r)
		}
	}
	n := 0
	for _, s := range listSessions(t, db) {
		if s.parent != "" {
			continue
		}
		n++
		sess := importChecked(t, db, "--session", s.id)
		var top, called []node
		byID := map[string]node{}
		for _, nd := range readNodes(t, sess) {
			byID[nd.ID] = nd
			if nd.Caller == "" {
				top = append(top, nd)
			} else {
				called = append(called, nd)
			}
		}
		for _, nd := range called {
			if !callsAgent(byID[nd.Caller]) {
				t.Errorf("node %s: its caller %q is not a node calling Crush's agent tool", nd.ID, nd.Caller)
			}
		}
		cut := func(msgID string) string { return cutBefore(t, db, s.id, msgID) }
		mains, summarize = checkSession(t, wireOf(dir), sess, cut, top, mains, summarize)
		subs, _ = checkSession(t, wireOf(dir), sess, cut, called, subs, nil)
	}
	if n != 1 {
		t.Fatalf("%d top-level sessions; every scenario records one", n)
	}
	if len(mains) > 0 || len(subs) > 0 || len(summarize) > 0 {
		t.Errorf("%d main, %d sub-agent and %d summarize requests answered by no node", len(mains), len(subs), len(summarize))
	}
}

// callsAgent reports whether n is an assistant node calling the agent
// tool (Crush's sub-agent).
func callsAgent(n node) bool {
	for _, c := range n.ToolCalls {
		if c.Name == "agent" {
			return true
		}
	}
	return false
}

// checkSession compares nodes (a session's top-level nodes, or its
// sub-agents') with the requests made for them: each request is answered
// by the next assistant node, and render at its predecessor equals the
// request's messages. A request made before the summary read the history
// raw; a request made while an earlier summary was in force is rendered
// from the database as it was then (cut before the answer: a session
// compacted more than once substitutes only its latest summary,
// docs/FORMAT.md §4), as is the summarize request of a later summary. Each
// summary node takes the next summarize request. It returns the requests
// and summarize requests left.
func checkSession(t *testing.T, wire, sess string, cut func(msgID string) string, nodes []node, reqs, summarize []request) (restReqs, restSummarize []request) {
	t.Helper()
	var answers, summaries []node
	raw := map[string]bool{}
	before := map[string]int{} // summaries before each answer
	for _, n := range nodes {
		if n.Metadata.Compaction {
			summaries = append(summaries, n)
		}
		if n.Role == "assistant" {
			answers = append(answers, n)
			raw[n.ID] = len(summaries) == 0
			before[n.ID] = len(summaries)
		}
	}
	if len(reqs) < len(answers) {
		t.Fatalf("%d assistant nodes for %d requests", len(answers), len(reqs))
	}
	restReqs, reqs = reqs[len(answers):], reqs[:len(answers)]
	if len(summaries) > len(summarize) {
		t.Fatalf("%d summary nodes, %d summarize requests", len(summaries), len(summarize))
	}
	for k, req := range reqs {
		a := answers[k]
		if a.Predecessor == nil {
			t.Fatalf("request %d: answer %s is a root", req.Seq, a.ID)
		}
		view := sess
		if n := before[a.ID]; n > 0 && n < len(summaries) {
			view = cut(a.ID)
		}
		got, want := normalize(wire, render(t, wire, view, *a.Predecessor, raw[a.ID])), normalize(wire, req.Body.Messages)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("request %d: render --head %s differs %s", req.Seq, *a.Predecessor, interoptest.Diff(got, want))
		}
	}
	for k, s := range summaries {
		if s.Metadata.Span.First != nodes[0].ID {
			t.Errorf("summary %s covers from %s, not from the session's first node %s", s.ID, s.Metadata.Span.First, nodes[0].ID)
		}
		view := sess
		if k > 0 {
			view = cut(strings.TrimPrefix(s.ID, transcript.SummaryIDPrefix))
		}
		checkSummary(t, wire, view, s, summarize[k], k == 0)
	}
	if len(summaries) > 0 {
		checkActive(t, sess, summaries)
	}
	return restReqs, summarize[len(summaries):]
}

// checkSummary: the summarize request is what render sends at the last
// node the summary covers (raw for the first summary; after it, from the
// summary before) and Crush's prompt.
func checkSummary(t *testing.T, wire, sess string, s node, req request, first bool) {
	t.Helper()
	if s.Metadata.Span.Count == 0 {
		t.Fatalf("summary %s covers nothing", s.ID)
	}
	last := s.Metadata.Span.Last
	want := normalize(wire, req.Body.Messages)
	if n := len(want); n == 0 || want[n-1]["role"] != "user" || want[n-1]["content"] != summaryPrompt {
		t.Fatalf("request %d does not end with Crush's summary prompt", req.Seq)
	}
	got := normalize(wire, render(t, wire, sess, last, first))
	if !reflect.DeepEqual(got, want[:len(want)-1]) {
		t.Errorf("summarize request %d: render (raw %v) --head %s differs %s", req.Seq, first, last, interoptest.Diff(got, want[:len(want)-1]))
	}
}

// checkActive: graph and audit report the session's last summary as the
// active one (a later summary supersedes an earlier one), audit with the
// nodes it covers.
func checkActive(t *testing.T, sess string, summaries []node) {
	t.Helper()
	out := interoptest.Must(t, "graph", "--json", sess)
	var g struct {
		ActiveSummaryID string `json:"active_summary_id"`
	}
	last := summaries[len(summaries)-1]
	if json.Unmarshal([]byte(out), &g) != nil || g.ActiveSummaryID != last.ID {
		t.Errorf("graph --json: active summary %q, want %s", g.ActiveSummaryID, last.ID)
	}
	out = interoptest.Must(t, "audit", "--json", sess)
	var a struct {
		Summaries []struct {
			ID           string `json:"summary_id"`
			Status       string `json:"status"`
			CoveredNodes int    `json:"covered_nodes"`
		} `json:"summaries"`
	}
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("audit --json: %v", err)
	}
	for _, as := range a.Summaries {
		if as.ID == last.ID && as.Status == "active" && as.CoveredNodes == last.Metadata.Span.Count {
			return
		}
	}
	t.Errorf("audit --json: summaries %+v, want %s active covering %d nodes", a.Summaries, last.ID, last.Metadata.Span.Count)
}

// cutBefore imports the session as it was before message msgID: a copy of
// the database without that message and every later one of the session.
func cutBefore(t *testing.T, db, sessionID, msgID string) string {
	t.Helper()
	h, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	cut := filepath.Join(t.TempDir(), ".crush", "crush.db")
	if err := os.MkdirAll(filepath.Dir(cut), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Exec(`VACUUM INTO ?`, cut); err != nil {
		t.Fatal(err)
	}
	c, err := sql.Open("sqlite", cut)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.Exec(`DELETE FROM messages WHERE session_id = ? AND rowid >= (SELECT rowid FROM messages WHERE id = ?)`, sessionID, msgID)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		t.Fatalf("no message %s in session %s to cut before", msgID, sessionID)
	}
	c.Close()
	return importChecked(t, cut, "--session", sessionID)
}
