package opencode_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/format/opencode"
	"github.com/ctxfold/ctxfold/internal/importtest"
	"github.com/ctxfold/ctxfold/transcript"
)

const dir = "testdata/"

// buildDB writes a database from opencode.sql.
func buildDB(t testing.TB, path string) {
	t.Helper()
	script, err := os.ReadFile(dir + "opencode.sql")
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
		if s := strings.TrimSpace(stmt); s != "" && !strings.HasPrefix(s, "--") || strings.Contains(stmt, "CREATE") {
			if _, err := db.Exec(stmt); err != nil {
				t.Fatalf("%v: %.80s", err, stmt)
			}
		}
	}
}

// TestWriteDB regenerates testdata/opencode.db from opencode.sql.
func TestWriteDB(t *testing.T) {
	if os.Getenv("OPENCODE_WRITE_DB") == "" {
		t.Skip("set OPENCODE_WRITE_DB=1 to rewrite testdata/opencode.db")
	}
	buildDB(t, dir+"opencode.db")
}

func load(t *testing.T, path string) *importtest.Target {
	t.Helper()
	var tg importtest.Target
	if err := opencode.Import(context.Background(), []string{path}, opencode.Options{}, &tg); err != nil {
		t.Fatal(err)
	}
	return &tg
}

func TestSources(t *testing.T) {
	built := filepath.Join(t.TempDir(), "opencode.db")
	buildDB(t, built)
	st := load(t, dir+"storage")
	// The committed database, one built from the SQL now, and the JSON
	// storage hold the same sessions: they import the same.
	for _, other := range []string{dir + "opencode.db", built} {
		db := load(t, other)
		if len(db.Convs) != len(st.Convs) {
			t.Fatalf("%s: %d sessions, storage %d", other, len(db.Convs), len(st.Convs))
		}
		for i := range st.Convs {
			a, b := st.Convs[i], db.Convs[i]
			ja, _ := json.Marshal(a.Nodes)
			jb, _ := json.Marshal(b.Nodes)
			if string(ja) != string(jb) || a.Name != b.Name || a.Model != b.Model || !reflect.DeepEqual(a.Counts, b.Counts) {
				t.Fatalf("%s: session %d differs from the storage:\n%s\n%s", other, i, ja, jb)
			}
		}
	}
}

func TestSession(t *testing.T) {
	tg := load(t, dir+"storage")
	if len(tg.Convs) != 2 {
		t.Fatalf("%d sessions", len(tg.Convs))
	}
	c := tg.Convs[0]
	if c.Name != "ses_01" || c.Model != "claude-sonnet-4-5" {
		t.Errorf("name %q model %q", c.Name, c.Model)
	}
	// user; three steps of msg_02, each with its result; the summary; the
	// user turn and the answer after it.
	want := importtest.Stats{Nodes: 10, Summaries: 1, User: 2, Assistant: 4, Tool: 3, Calls: 3, Results: 3}
	if got := importtest.StatsOf(c.Nodes); got != want {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
	ids := []string{}
	for _, n := range c.Nodes {
		ids = append(ids, n.ID)
	}
	if got := strings.Join(ids, " "); got != "msg_01 msg_02 r-prt_08 msg_02-2 r-prt_12 msg_02-3 r-prt_15 summary_msg_04 msg_05 msg_06" {
		t.Fatalf("ids %s", got)
	}
	if got := c.Nodes[0].Content.PlainText(); !strings.Contains(got, "TestRetry is flaky") || !strings.Contains(got, "00018|") {
		t.Errorf("user text with the synthetic file parts: %q", got)
	}
	// Each step has the usage of its step-finish; input is the whole prompt.
	if u := c.Nodes[1].Usage; u == nil || u.InputTokens != 10+9000+800 || u.CachedInputTokens != 9000 || u.OutputTokens != 180 || string(u.Extra["reasoning_output_tokens"]) != "40" {
		t.Errorf("step 1 usage %+v", u)
	}
	if u := c.Nodes[3].Usage; u == nil || u.InputTokens != 12+9800+400 {
		t.Errorf("step 2 usage %+v", u)
	}
	// The last step has no step-finish: the message's tokens.
	if u := c.Nodes[5].Usage; u == nil || u.InputTokens != 2+10200 {
		t.Errorf("step 3 usage %+v", u)
	}
	if r := c.Nodes[4]; string(r.Metadata["is_error"]) != "true" || !strings.Contains(r.Content.PlainText(), "modified since") {
		t.Errorf("failed call %+v", r)
	}
	if r := c.Nodes[6]; r.Content.PlainText() != "[Tool execution was interrupted]" || string(r.Metadata["is_error"]) != "true" {
		t.Errorf("interrupted call %+v", r)
	}
	if th := c.Nodes[1].Content.Blocks[0]; th.Type != transcript.BlockThinking {
		t.Errorf("reasoning %+v", th)
	}
	sum := c.Nodes[7]
	if !sum.IsSummary() || len(sum.CoversIDs()) != 7 || sum.Predecessor != "" || !strings.Contains(sum.Content.PlainText(), "Inject a fake clock") {
		t.Errorf("summary %+v", sum)
	}
	if c.Nodes[8].Predecessor != "r-prt_15" {
		t.Errorf("the turn after the compaction follows the last real turn: %q", c.Nodes[8].Predecessor)
	}
	if c.Counts[[2]string{"message/user", transcript.OutcomeMerged}] != 1 || c.Counts[[2]string{"part/patch", transcript.OutcomeSkipped}] != 1 {
		t.Errorf("counts %v", c.Counts)
	}
	sub := tg.Convs[1]
	if sub.Name != "ses_02" || len(sub.Nodes) != 1 || len(sub.Warnings) != 1 || sub.Counts[[2]string{"message/assistant", transcript.OutcomeSkipped}] != 1 {
		t.Errorf("sub-agent session %+v", sub)
	}
}

func TestOneSessionFile(t *testing.T) {
	tg := load(t, dir+"storage/session/prj_1/ses_02.json")
	if len(tg.Convs) != 1 || tg.Convs[0].Name != "ses_02" {
		t.Fatalf("%d sessions", len(tg.Convs))
	}
}

func TestDetect(t *testing.T) {
	head, _ := os.ReadFile(dir + "opencode.db")
	if !opencode.Detect(head) || !opencode.DetectPath(dir+"storage") || !opencode.DetectPath(dir) || !opencode.DetectPath(dir+"storage/session/prj_1/ses_01.json") {
		t.Error("not detected")
	}
	other := filepath.Join(t.TempDir(), "other.db")
	db, _ := sql.Open("sqlite", other)
	db.Exec("CREATE TABLE notes (id TEXT, body TEXT)")
	db.Close()
	head, _ = os.ReadFile(other)
	if opencode.Detect(head) || !strings.Contains(opencode.Near(other, head), "not OpenCode's") {
		t.Errorf("another SQLite database: near %q", opencode.Near(other, head))
	}
	err := opencode.Import(context.Background(), []string{other}, opencode.Options{}, &importtest.Target{})
	var pe *transcript.ParseError
	if !errors.As(err, &pe) || !strings.Contains(pe.Msg, "not an OpenCode database") {
		t.Errorf("import of another database: %v", err)
	}
	before, _ := os.ReadFile(dir + "opencode.db")
	load(t, dir+"opencode.db")
	after, _ := os.ReadFile(dir + "opencode.db")
	if string(before) != string(after) {
		t.Error("the database changed by being read")
	}
}

func FuzzImport(f *testing.F) {
	importtest.Fuzz(f, dir, []string{"opencode.db"}, "opencode.db", opencode.Import)
}
