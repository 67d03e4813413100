package crush_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ctxfold/ctxfold/format/crush"
	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/internal/importtest"
	"github.com/ctxfold/ctxfold/transcript"

	_ "modernc.org/sqlite"
)

const dir = "testdata/"

// buildDB writes a database from crush.sql.
func buildDB(t testing.TB, path string) {
	t.Helper()
	script, err := os.ReadFile(dir + "crush.sql")
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(path)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, stmt := range strings.Split(string(script), ";\n") {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%v: %.80s", err, stmt)
		}
	}
}

// TestWriteDB regenerates testdata/crush.db from crush.sql.
func TestWriteDB(t *testing.T) {
	if os.Getenv("CRUSH_WRITE_DB") == "" {
		t.Skip("set CRUSH_WRITE_DB=1 to rewrite testdata/crush.db")
	}
	buildDB(t, dir+"crush.db")
}

func load(t *testing.T, opts crush.Options) *importtest.Target {
	t.Helper()
	var tg importtest.Target
	if err := crush.Import(context.Background(), []string{dir + "crush.db"}, opts, &tg); err != nil {
		t.Fatal(err)
	}
	return &tg
}

func TestDetect(t *testing.T) {
	head, err := os.ReadFile(dir + "crush.db")
	if err != nil {
		t.Fatal(err)
	}
	if !crush.Detect(head[:min(len(head), 64<<10)]) {
		t.Error("crush.db not detected")
	}
	if crush.Detect([]byte("SQLite format 3\x00 CREATE TABLE message (session_id, data); CREATE TABLE part")) {
		t.Error("an OpenCode database detected as Crush's")
	}
	if !crush.DetectPath("/p/.crush/crush.db") || crush.DetectPath("/p/crush.db") {
		t.Error("DetectPath")
	}
}

// TestSession: messages, the tool calls and their results, the bang-mode
// shell command, the failing call's error, and the summary covering every
// turn before it.
func TestSession(t *testing.T) {
	tg := load(t, crush.Options{})
	if len(tg.Convs) != 3 {
		t.Fatalf("%d conversations, want 3", len(tg.Convs))
	}
	c := tg.Convs[0]
	want := importtest.Stats{Nodes: 10, Summaries: 1, User: 3, Assistant: 4, Tool: 2, Calls: 2, Results: 2}
	if got := importtest.StatsOf(c.Nodes); got != want {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
	if c.Name != "0c5e0001-aaaa-4000-8000-000000000001" || c.Model != "fake-model" || c.Head != "0c5e0001-0000-4000-8000-000000000008" {
		t.Errorf("name %q model %q head %q", c.Name, c.Model, c.Head)
	}
	byID := map[string]transcript.Node{}
	for _, n := range c.Nodes {
		byID[n.ID] = n
	}
	if u := byID["0c5e0001-0000-4000-8000-000000000001"]; u.Content.Text != "List the files." || u.CreatedAt != "2026-01-01T00:00:00Z" {
		t.Errorf("first user %+v: text is trimmed, created_at in seconds", u)
	}
	a := byID["0c5e0001-0000-4000-8000-000000000002"]
	if len(a.ToolCalls) != 1 || string(a.ToolCalls[0].Arguments) != `{"command":"ls"}` || a.Content.Blocks[0].Type != transcript.BlockThinking {
		t.Errorf("assistant %+v", a)
	}
	if u := byID["0c5e0001-0000-4000-8000-000000000005"]; u.Content.Text != "Run a missing command.\n\n$ pwd\n/work/app\n\n(exit code 0)" {
		t.Errorf("shell command %q", u.Content.Text)
	}
	if r := byID["0c5e0001-0000-4000-8000-000000000012-0"]; r.ToolCallID != "call_2" || string(r.Metadata["is_error"]) != "true" {
		t.Errorf("error result %+v", r)
	}
	s := byID["summary_0c5e0001-0000-4000-8000-000000000006"]
	if !s.IsSummary() || len(s.CoversIDs()) != 7 || s.Content.Text != transcript.SummaryPrefix+"The user listed the files (main.go, README.md) and ran a missing command." {
		t.Errorf("summary %+v covers %d", s, len(s.CoversIDs()))
	}
	if n := byID["0c5e0001-0000-4000-8000-000000000007"]; n.Predecessor != "0c5e0001-0000-4000-8000-000000000012-0" {
		t.Errorf("the turn after the summary follows %q, want the last covered node", n.Predecessor)
	}
	if c.Counts[[2]string{"part/finish", transcript.OutcomeMerged}] != 5 {
		t.Errorf("finish parts counted %v", c.Counts)
	}
}

// TestAsSent: what Crush leaves out or adds when it builds a request (its
// preparePrompt): a cancelled empty answer and a result without its call
// are skipped; a call without a result gets Crush's interrupted-call error.
func TestAsSent(t *testing.T) {
	c := load(t, crush.Options{}).Convs[2]
	want := importtest.Stats{Nodes: 5, User: 2, Assistant: 2, Tool: 1, Calls: 1, Results: 1}
	if got := importtest.StatsOf(c.Nodes); got != want {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
	last := c.Nodes[4]
	if last.ToolCallID != "call_9" || !strings.HasPrefix(last.Content.Text, "tool call was interrupted") || string(last.Metadata["is_error"]) != "true" {
		t.Errorf("interrupted call's result %+v", last)
	}
	if c.Counts[[2]string{"message/assistant", transcript.OutcomeSkipped}] != 1 || c.Counts[[2]string{"part/tool_result", transcript.OutcomeSkipped}] != 1 ||
		c.Counts[[2]string{"part/tool_call", transcript.OutcomeMerged}] != 1 {
		t.Errorf("counts %v", c.Counts)
	}
}

func TestChoose(t *testing.T) {
	if tg := load(t, crush.Options{Latest: true}); len(tg.Convs) != 1 || tg.Convs[0].Name != "0c5e0001-aaaa-4000-8000-000000000003" {
		t.Errorf("Latest: %d conversations", len(tg.Convs))
	}
	if tg := load(t, crush.Options{SessionID: "0c5e0001-aaaa-4000-8000-000000000002"}); len(tg.Convs) != 1 || tg.Convs[0].Model != "fake-small" {
		t.Errorf("SessionID: %+v", tg.Convs)
	}
	if tg := load(t, crush.Options{Session: 1}); len(tg.Convs) != 1 || tg.Convs[0].Name != "0c5e0001-aaaa-4000-8000-000000000001" {
		t.Errorf("Session 1: %+v", tg.Convs)
	}
	err := crush.Import(context.Background(), []string{dir + "crush.db"}, crush.Options{SessionID: "nope"}, &importtest.Target{})
	var pe *transcript.ParseError
	if !errors.As(err, &pe) || !strings.Contains(pe.Msg, "0c5e0001-aaaa-4000-8000-000000000003") {
		t.Errorf("unknown session: %v, want an error naming the sessions", err)
	}
}

// TestReadOnly: importing never writes the database or its folder, even
// one the user cannot write (a copy is read then).
func TestReadOnly(t *testing.T) {
	d := t.TempDir()
	path := filepath.Join(d, "crush.db")
	buildDB(t, path)
	before, _ := os.ReadFile(path)
	os.Chmod(d, 0o555)
	defer os.Chmod(d, 0o755)
	var tg importtest.Target
	if err := crush.Import(context.Background(), []string{path}, crush.Options{}, &tg); err != nil || len(tg.Convs) != 3 {
		t.Fatalf("import from a read-only folder: %v", err)
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Error("the database changed")
	}
}

func TestBadParts(t *testing.T) {
	d := t.TempDir()
	path := filepath.Join(d, "crush.db")
	buildDB(t, path)
	db, _ := sql.Open("sqlite", path)
	db.Exec(`UPDATE messages SET parts = '{"type":"text"}' WHERE id = '0c5e0003-0000-4000-8000-000000000002'`)
	db.Close()
	err := crush.Import(context.Background(), []string{path}, crush.Options{}, &importtest.Target{})
	var pe *transcript.ParseError
	if !errors.As(err, &pe) || pe.File != path || !strings.Contains(pe.Msg, "0c5e0003-0000-4000-8000-000000000002") || !strings.Contains(pe.Msg, "parts must be") {
		t.Errorf("error %v, want one naming the file and message", err)
	}
}

func TestFind(t *testing.T) {
	home := t.TempDir()
	if got, err := crush.Find(input.Env{Home: home}); err != nil || len(got) != 0 {
		t.Fatalf("no projects.json: %v %v", got, err)
	}
	proj := filepath.Join(home, "app")
	os.MkdirAll(filepath.Join(proj, ".crush"), 0o755)
	buildDB(t, filepath.Join(proj, ".crush", "crush.db"))
	global := filepath.Join(home, "data")
	os.MkdirAll(global, 0o755)
	os.WriteFile(filepath.Join(global, "projects.json"), []byte(`{"projects":[{"path":"`+proj+`","data_dir":".crush","last_accessed":"2026-01-01T00:00:00Z"},{"path":"/gone","data_dir":"/gone/.crush"}]}`), 0o644)
	env := input.Env{Home: home, Getenv: func(k string) string {
		if k == "CRUSH_GLOBAL_DATA" {
			return global
		}
		return ""
	}}
	got, err := crush.Find(env)
	if err != nil || len(got) != 3 {
		t.Fatalf("found %+v, %v; want 3 sessions", got, err)
	}
	for _, f := range got {
		if f.Project != proj || f.File != filepath.Join(proj, ".crush", "crush.db") || f.Model == "" || f.Updated.Before(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("found %+v", f)
		}
	}
}

func FuzzImport(f *testing.F) {
	importtest.Fuzz(f, dir, []string{"crush.db"}, "crush.db", crush.Import)
}

// TestSubagentSession: a session whose id names a call of its parent
// session ("<message id>$$<call id>", as Crush names a sub-agent's) imports
// as a caller subtree of the node holding that call, in the parent's
// conversation; one whose call is not there still imports, uncalled and
// warned; --session ID names it alone; Find lists only the top-level
// sessions.
func TestSubagentSession(t *testing.T) {
	for _, tc := range []struct {
		call, caller string
		old          bool // the session named by the call id alone (Crush before October 2025)
	}{
		{"call_1", "0c5e0001-0000-4000-8000-000000000002", false},
		{"call_missing", "", false},
		{"call_1", "0c5e0001-0000-4000-8000-000000000002", true},
	} {
		home := t.TempDir()
		path := filepath.Join(home, "app", ".crush", "crush.db")
		os.MkdirAll(filepath.Dir(path), 0o755)
		buildDB(t, path)
		db, _ := sql.Open("sqlite", path)
		sub := "0c5e0001-0000-4000-8000-000000000002$$" + tc.call
		if tc.old {
			sub = tc.call
		}
		for _, q := range []string{`UPDATE sessions SET id = ? WHERE id = '0c5e0001-aaaa-4000-8000-000000000002'`,
			`UPDATE messages SET session_id = ? WHERE session_id = '0c5e0001-aaaa-4000-8000-000000000002'`} {
			if _, err := db.Exec(q, sub); err != nil {
				t.Fatal(err)
			}
		}
		db.Close()
		var tg importtest.Target
		if err := crush.Import(context.Background(), []string{path}, crush.Options{}, &tg); err != nil {
			t.Fatal(err)
		}
		if len(tg.Convs) != 2 || tg.Convs[0].Name != "0c5e0001-aaaa-4000-8000-000000000001" {
			t.Fatalf("%d conversations, want the two top-level ones", len(tg.Convs))
		}
		c := tg.Convs[0]
		var called []transcript.Node
		for _, n := range c.Nodes {
			if n.ID == "0c5e0002-0000-4000-8000-000000000001" || n.ID == "0c5e0002-0000-4000-8000-000000000002" {
				called = append(called, n)
			}
		}
		if len(called) != 2 || called[0].Caller != tc.caller || called[1].Caller != tc.caller || called[1].Predecessor != called[0].ID {
			t.Errorf("%s: sub-agent nodes %+v, want a chain called by %q", tc.call, called, tc.caller)
		}
		if c.Head != "0c5e0001-0000-4000-8000-000000000008" {
			t.Errorf("%s: head %q: a sub-agent's node moved HEAD", tc.call, c.Head)
		}
		if warned := strings.Contains(strings.Join(c.Warnings, "\n"), tc.call); warned != (tc.caller == "") {
			t.Errorf("%s: warnings %q", tc.call, c.Warnings)
		}
		// sessions lists the top-level sessions only.
		os.MkdirAll(filepath.Join(home, ".local", "share", "crush"), 0o755)
		os.WriteFile(filepath.Join(home, ".local", "share", "crush", "projects.json"), []byte(`{"projects":[{"path":"`+filepath.Join(home, "app")+`"}]}`), 0o644)
		if found, err := crush.Find(input.Env{Home: home, Getenv: func(string) string { return "" }}); err != nil || len(found) != 2 {
			t.Errorf("%s: Find listed %+v, %v; want the two top-level sessions", tc.call, found, err)
		}
		var alone importtest.Target
		if err := crush.Import(context.Background(), []string{path}, crush.Options{SessionID: sub}, &alone); err != nil || len(alone.Convs) != 1 || len(alone.Convs[0].Nodes) != 2 {
			t.Errorf("%s: --session %s alone: %v", tc.call, sub, err)
		}
	}
}

// TestAfterSummary: once a session has a summary Crush sends only the
// messages from it on, so a result there whose call came before the
// summary is dropped (as Crush drops it), and the call, whose result its
// own segment lacks, gets Crush's interrupted-call result.
func TestAfterSummary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crush.db")
	buildDB(t, path)
	db, _ := sql.Open("sqlite", path)
	// call_2's result (…012) moves after the summary (…006), before the
	// next user message (…007, a later row).
	if _, err := db.Exec(`UPDATE messages SET created_at = (SELECT created_at FROM messages WHERE id = '0c5e0001-0000-4000-8000-000000000007')
		WHERE id = '0c5e0001-0000-4000-8000-000000000012'`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	var tg importtest.Target
	if err := crush.Import(context.Background(), []string{path}, crush.Options{SessionID: "0c5e0001-aaaa-4000-8000-000000000001"}, &tg); err != nil {
		t.Fatal(err)
	}
	c := tg.Convs[0]
	var interrupted, kept int
	for _, n := range c.Nodes {
		if n.ToolCallID == "call_2" && n.Content.Text == "tool call was interrupted and did not produce a result, you may retry this call if the result is still needed" {
			interrupted++
		}
		if strings.Contains(n.Content.Text, "nosuch: command not found") {
			kept++
		}
	}
	if interrupted != 1 || kept != 0 || len(c.Warnings) != 0 {
		t.Errorf("%d interrupted results, %d nodes with the dropped result, warnings %q; want 1, 0, none", interrupted, kept, c.Warnings)
	}
	if c.Counts[[2]string{"part/tool_result", transcript.OutcomeSkipped}] != 1 {
		t.Errorf("counts %v: the dropped result is not counted as skipped", c.Counts)
	}
}

// TestIDNotUTF8: a message id holding bytes that are not UTF-8 (SQLite
// keeps whatever it is given) imports with those bytes replaced, and the
// summary covering it names the id the node got — JSON would replace them
// on the way into the store and the summary would cover a node that does
// not exist (found by FuzzImport).
func TestIDNotUTF8(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crush.db")
	buildDB(t, path)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	bad := "0c5e0001-0000-4000-8000-0000000\xff0004"
	if _, err := db.Exec(`UPDATE messages SET id = CAST(? AS TEXT) WHERE id = '0c5e0001-0000-4000-8000-000000000004'`, []byte(bad)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	var tg importtest.Target
	if err := crush.Import(context.Background(), []string{path}, crush.Options{}, &tg); err != nil {
		t.Fatal(err)
	}
	want := "0c5e0001-0000-4000-8000-0000000\uFFFD0004"
	found := false
	for _, n := range tg.Convs[0].Nodes {
		if n.ID == want {
			found = true
		}
		if !utf8.ValidString(n.ID) {
			t.Errorf("node id %q is not UTF-8", n.ID)
		}
	}
	if !found {
		t.Fatalf("no node %q among the imported", want)
	}
}
