package opencode_test

// The current OpenCode (1.18): its `opencode export` document and its
// database schema, from the real recordings of interop/opencode; which
// session a store import reads; and Find.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/format/opencode"
	"github.com/ctxfold/ctxfold/internal/importtest"
	"github.com/ctxfold/ctxfold/transcript"
)

const recorded = "../../testdata/interop/opencode/1.18.33/"

func importFile(t *testing.T, path string, opts opencode.Options) (*importtest.Target, error) {
	t.Helper()
	var tg importtest.Target
	err := opencode.Import(context.Background(), []string{path}, opts, &tg)
	return &tg, err
}

// recordedDB builds a database with the client's own schema and rows
// from a recording's db.sql, plus extra statements.
func recordedDB(t testing.TB, scenario, name string, extra ...string) string {
	t.Helper()
	script, err := os.ReadFile(recorded + scenario + "/db.sql")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range append([]string{string(script)}, extra...) {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%v: %.100s", err, s)
		}
	}
	return path
}

func TestExportWithCompaction(t *testing.T) {
	file := recorded + "compaction/export-1.json"
	head, _ := os.ReadFile(file)
	if !opencode.Detect(head) {
		t.Fatal("the export is not detected")
	}
	tg, err := importFile(t, file, opencode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tg.Convs) != 1 || tg.Convs[0].Model != "fake-model" || !strings.HasPrefix(tg.Convs[0].Name, "ses_") {
		t.Fatalf("sessions %+v", tg.Convs)
	}
	nodes := tg.Convs[0].Nodes
	var sum *transcript.Node
	real := 0
	for i := range nodes {
		if nodes[i].IsSummary() {
			sum = &nodes[i]
		} else if sum == nil {
			real++
		}
	}
	if sum == nil {
		t.Fatal("no summary node")
	}
	// Everything before the compaction: the tool turn (user, call,
	// result, answer) and the inflated turn (user, answer).
	if got := len(sum.CoversIDs()); got != real || got != 6 {
		t.Errorf("the summary covers %d of the %d nodes before it", got, real)
	}
	var sent []map[string]any
	if err := json.Unmarshal(sum.Metadata[transcript.MetaOpenAIMessages], &sent); err != nil || len(sent) != 2 ||
		sent[0]["content"] != "What did we do so far?" || sent[1]["role"] != "assistant" {
		t.Errorf("the summary as OpenCode sends it: %v %v", sent, err)
	}
	// The first step answered 900000 tokens: its usage is on its node.
	found := false
	for _, n := range nodes {
		if n.Usage != nil && n.Usage.InputTokens == 900000 && !n.IsSummary() {
			found = true
		}
	}
	if !found {
		t.Error("the inflated request's usage is on no node")
	}
}

func TestExportTail(t *testing.T) {
	file := recorded + "compaction-tail/export-1.json"
	if _, err := os.Stat(file); err != nil {
		t.Skip("not recorded")
	}
	tg, err := importFile(t, file, opencode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range tg.Convs[0].Nodes {
		if n.IsSummary() {
			// The tool turn (4 nodes) is covered; the inflated turn is
			// kept verbatim after the summary (tail_start_id).
			if got := len(n.CoversIDs()); got != 4 || string(n.Metadata["opencode_tail_start_id"]) == "" {
				t.Errorf("covers %d, tail %s", got, n.Metadata["opencode_tail_start_id"])
			}
			return
		}
	}
	t.Error("no summary node")
}

func TestExportErrors(t *testing.T) {
	for _, c := range []struct{ name, doc, want string }{
		{"truncated", `{"info": {"id": "ses_1"}, "messages": [{"info": {"id": "msg_1", "role": "user"}, "parts": [`, "export.json:1: expected a message"},
		{"no info", `{"messages": []}`, "both info and messages"},
		{"no session id", `{"info": {}, "messages": []}`, "has no id"},
		{"messages not an array", `{"info": {"id": "ses_1"}, "messages": {}}`, "array of messages"},
		{"message without info", "{\"info\": {\"id\": \"ses_1\"},\n \"messages\": [{\"parts\": []}]}", "message 1: no info"},
		{"message without id", `{"info": {"id": "ses_1"}, "messages": [{"info": {"role": "user"}, "parts": []}]}`, "has no id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "export.json")
			os.WriteFile(path, []byte(c.doc), 0o644)
			_, err := importFile(t, path, opencode.Options{})
			var pe *transcript.ParseError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) || pe.File != path {
				t.Errorf("got %v, want a parse error of %s saying %q", err, path, c.want)
			}
		})
	}
}

// The current schema spreads over more pages than Detect's head: the
// path is what recognises it, and the export and the database import alike.
func TestCurrentDatabase(t *testing.T) {
	db := recordedDB(t, "compaction", "opencode.db")
	if !opencode.DetectPath(db) {
		t.Fatal("the current database is not detected by its path")
	}
	fromDB, err := importFile(t, db, opencode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fromExport, _ := importFile(t, recorded+"compaction/export-1.json", opencode.Options{})
	a, _ := json.Marshal(fromDB.Convs[0].Nodes)
	b, _ := json.Marshal(fromExport.Convs[0].Nodes)
	if string(a) != string(b) {
		t.Errorf("database and export differ:\n%s\n%s", a, b)
	}
}

// threeSessions is the recorded chat database with two more sessions:
// an older one updated last, and a newer one updated first.
func threeSessions(t *testing.T) (string, []string) {
	db := recordedDB(t, "chat", "opencode.db")
	conn, _ := sql.Open("sqlite", db)
	defer conn.Close()
	var first string
	conn.QueryRow(`SELECT id FROM session`).Scan(&first)
	for i, upd := range []int64{9e12, 1} {
		id := fmt.Sprintf("ses_copy%d", i)
		for _, q := range []string{
			`INSERT INTO session SELECT '` + id + `', project_id, workspace_id, parent_id, slug, directory, path, title, version, share_url, summary_additions, summary_deletions, summary_files, summary_diffs, metadata, cost, tokens_input, tokens_output, tokens_reasoning, tokens_cache_read, tokens_cache_write, revert, permission, agent, model, time_created + ` + fmt.Sprint(i+1) + `, ` + fmt.Sprint(upd) + `, time_compacting, time_archived FROM session WHERE id = '` + first + `'`,
			`INSERT INTO message SELECT id || '` + id + `', '` + id + `', time_created, time_updated, data FROM message WHERE session_id = '` + first + `'`,
			`INSERT INTO part SELECT id || '` + id + `', message_id || '` + id + `', '` + id + `', time_created, time_updated, data FROM part WHERE session_id = '` + first + `'`,
		} {
			if _, err := conn.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
	}
	return db, []string{first, "ses_copy0", "ses_copy1"}
}

func TestSessionChoice(t *testing.T) {
	db, ids := threeSessions(t)
	all, err := importFile(t, db, opencode.Options{})
	if err != nil || len(all.Convs) != 3 {
		t.Fatalf("all: %v, %d sessions", err, len(all.Convs))
	}
	for _, c := range []struct {
		opts opencode.Options
		want string
	}{
		{opencode.Options{SessionID: ids[2]}, ids[2]},
		{opencode.Options{Session: 1}, ids[0]},
		{opencode.Options{Latest: true}, ids[1]}, // updated last
		{opencode.Options{Latest: true, SessionID: ids[0]}, ids[0]},
	} {
		tg, err := importFile(t, db, c.opts)
		if err != nil || len(tg.Convs) != 1 || tg.Convs[0].Name != c.want {
			t.Errorf("%+v: %v, %+v; want only %s", c.opts, err, tg.Convs, c.want)
		}
	}
	_, err = importFile(t, db, opencode.Options{SessionID: "ses_nope"})
	if err == nil || !strings.Contains(err.Error(), `no session "ses_nope"`) || !strings.Contains(err.Error(), ids[2]) {
		t.Errorf("an unknown session: %v", err)
	}
	// The export holds one session: Latest changes nothing.
	if tg, err := importFile(t, recorded+"chat/export-1.json", opencode.Options{Latest: true}); err != nil || len(tg.Convs) != 1 {
		t.Errorf("export with Latest: %v", err)
	}
}

// manySessions writes n sessions (no messages) into a database with the
// recorded schema under home's data folder for client.
func manySessions(t testing.TB, home, client string, n int) string {
	dir := filepath.Join(home, ".local", "share", client)
	os.MkdirAll(dir, 0o755)
	db := recordedDB(t, "chat", client+".db")
	conn, _ := sql.Open("sqlite", db)
	tx, _ := conn.Begin()
	for i := 1; i < n; i++ {
		if _, err := tx.Exec(`INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated, model)
			VALUES (?, 'global', 's', ?, 't', '1.18.33', ?, ?, '{"id":"m1","providerID":"p"}')`,
			fmt.Sprintf("ses_gen%04d", i), fmt.Sprintf("/src/p%d", i%7), 1e12+i, 1e12+i); err != nil {
			t.Fatal(err)
		}
	}
	tx.Commit()
	conn.Close()
	target := filepath.Join(dir, client+".db")
	if err := os.Rename(db, target); err != nil {
		t.Fatal(err)
	}
	return target
}

func TestFind(t *testing.T) {
	home := t.TempDir()
	db := manySessions(t, home, "opencode", 1000)
	got, err := opencode.Find(input.Env{Home: home})
	if err != nil || len(got) != 1000 {
		t.Fatalf("%v, %d sessions", err, len(got))
	}
	byID := map[string]input.Found{}
	for _, f := range got {
		byID[f.SessionID] = f
	}
	if f := byID["ses_gen0999"]; f.File != db || f.Project != "/src/p5" || f.Model != "m1" || f.Updated.UnixMilli() != 1e12+999 || f.Bytes == 0 {
		t.Errorf("a generated session: %+v", f)
	}
	// The recorded session: its directory and model as OpenCode wrote them.
	for id, f := range byID {
		if !strings.HasPrefix(id, "ses_gen") && (f.Model != "fake-model" || f.Project != "/work/interop/project") {
			t.Errorf("the recorded session: %+v", f)
		}
	}
	// Kilo's folder is its own; XDG_DATA_HOME and OPENCODE_DB move them.
	if k, err := opencode.FindKilo(input.Env{Home: home}); err != nil || len(k) != 0 {
		t.Errorf("kilo: %v %d", err, len(k))
	}
	xdg := t.TempDir()
	manySessions(t, xdg, "kilo", 3)
	env := func(vars map[string]string) input.Env {
		return input.Env{Home: t.TempDir(), Getenv: func(k string) string { return vars[k] }}
	}
	if k, err := opencode.FindKilo(env(map[string]string{"XDG_DATA_HOME": filepath.Join(xdg, ".local", "share")})); err != nil || len(k) != 3 {
		t.Errorf("kilo under XDG_DATA_HOME: %v %d", err, len(k))
	}
	if o, err := opencode.Find(env(map[string]string{"OPENCODE_DB": db})); err != nil || len(o) != 1000 {
		t.Errorf("OPENCODE_DB: %v %d", err, len(o))
	}
	if o, err := opencode.Find(input.Env{Home: t.TempDir()}); err != nil || len(o) != 0 {
		t.Errorf("no OpenCode: %v %d", err, len(o))
	}
}

// BenchmarkFind lists a store of 1,000 sessions (docs/BENCHMARKS.md).
func BenchmarkFind(b *testing.B) {
	home := b.TempDir()
	manySessions(b, home, "opencode", 1000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if got, err := opencode.Find(input.Env{Home: home}); err != nil || len(got) != 1000 {
			b.Fatal(err, len(got))
		}
	}
}

func FuzzImportExport(f *testing.F) {
	importtest.Fuzz(f, recorded, []string{"tool/export-1.json", "compaction/export-1.json"}, "export.json", opencode.Import)
}

// A failed request is not sent again; an aborted one with output is
// (MessageV2.toModelMessages).
func TestFailedAndAborted(t *testing.T) {
	doc := `{"info": {"id": "ses_f"}, "messages": [
 {"info": {"id": "msg_1", "role": "user", "time": {"created": 1}}, "parts": [{"id": "p1", "type": "text", "text": "go"}]},
 {"info": {"id": "msg_2", "role": "assistant", "time": {"created": 2}, "error": {"name": "APIError", "data": {"message": "overloaded"}}},
  "parts": [{"id": "p2", "type": "step-start"}, {"id": "p3", "type": "text", "text": "half an answer"}]},
 {"info": {"id": "msg_3", "role": "assistant", "time": {"created": 3}, "error": {"name": "MessageAbortedError", "data": {"message": "aborted"}}},
  "parts": [{"id": "p4", "type": "step-start"}, {"id": "p5", "type": "text", "text": "stopped here"}]},
 {"info": {"id": "msg_4", "role": "assistant", "time": {"created": 4}, "error": {"name": "MessageAbortedError", "data": {"message": "aborted"}}},
  "parts": [{"id": "p6", "type": "step-start"}, {"id": "p7", "type": "reasoning", "text": "thinking"}]}]}`
	path := filepath.Join(t.TempDir(), "export.json")
	os.WriteFile(path, []byte(doc), 0o644)
	tg, err := importFile(t, path, opencode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, n := range tg.Convs[0].Nodes {
		texts = append(texts, n.Content.PlainText())
	}
	if strings.Join(texts, "|") != "go|stopped here" {
		t.Errorf("nodes %q; want the user turn and the aborted answer only", texts)
	}
	if got := tg.Convs[0].Counts[[2]string{"message/assistant", transcript.OutcomeSkipped}]; got != 2 {
		t.Errorf("%d assistant messages skipped, want 2", got)
	}
}
