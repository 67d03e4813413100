package crush_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/format/crush"
	"github.com/ctxfold/ctxfold/internal/importtest"
	"github.com/ctxfold/ctxfold/transcript"
)

// legacyDB is testdata's database in the schema of Crush before August
// 2025 (its migrations up to 20250627000000, as the real databases
// published in public repositories have it: docs/INTEROP-crush.md): no
// messages.is_summary_message, no todos or read_files, the summary named
// only by sessions.summary_message_id.
func legacyDB(t *testing.T, extra ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "crush.db")
	buildDB(t, path)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, stmt := range []string{
		`CREATE TABLE goose_db_version (id INTEGER PRIMARY KEY AUTOINCREMENT, version_id INTEGER NOT NULL, is_applied INTEGER NOT NULL, tstamp TIMESTAMP DEFAULT (datetime('now')))`,
		`INSERT INTO goose_db_version (version_id, is_applied) VALUES (0, 1), (20250424200609, 1), (20250515105448, 1), (20250624000000, 1), (20250627000000, 1)`,
		`ALTER TABLE messages DROP COLUMN is_summary_message`,
		`ALTER TABLE sessions DROP COLUMN todos`,
		`DROP TABLE read_files`,
		`VACUUM`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%v: %s", err, stmt)
		}
	}
	for _, stmt := range extra {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%v: %s", err, stmt)
		}
	}
	return path
}

// TestInitialSchema: the schema of Crush's first migration (20250424200609,
// also the Go OpenCode's .opencode/opencode.db of spring 2025), without
// sessions.summary_message_id, is detected and imports; with no summary
// feature yet, the would-be summary message is an assistant message.
func TestInitialSchema(t *testing.T) {
	path := legacyDB(t, `ALTER TABLE sessions DROP COLUMN summary_message_id`, `DELETE FROM goose_db_version WHERE version_id > 20250424200609`, `VACUUM`)
	head, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !crush.Detect(head[:min(len(head), 64<<10)]) {
		t.Fatal("a database of Crush's first schema not detected")
	}
	var tg importtest.Target
	if err := crush.Import(context.Background(), []string{path}, crush.Options{}, &tg); err != nil {
		t.Fatal(err)
	}
	if len(tg.Convs) != 3 {
		t.Fatalf("%d conversations, want 3", len(tg.Convs))
	}
	for _, n := range tg.Convs[0].Nodes {
		if n.IsSummary() {
			t.Errorf("summary node %s in a schema without summaries", n.ID)
		}
	}
}

// TestLegacySchema: a database older than is_summary_message is detected
// as Crush's and imports as the same conversations, its summary message
// (summary_message_id) a summary node as in the current schema.
func TestLegacySchema(t *testing.T) {
	path := legacyDB(t)
	head, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !crush.Detect(head[:min(len(head), 64<<10)]) {
		t.Fatal("a database of Crush before is_summary_message not detected")
	}
	var old importtest.Target
	if err := crush.Import(context.Background(), []string{path}, crush.Options{}, &old); err != nil {
		t.Fatal(err)
	}
	cur := load(t, crush.Options{})
	if len(old.Convs) != len(cur.Convs) {
		t.Fatalf("%d conversations, want %d", len(old.Convs), len(cur.Convs))
	}
	summaries := 0
	for i, c := range old.Convs {
		want := cur.Convs[i]
		if !reflect.DeepEqual(c.Nodes, want.Nodes) || c.Head != want.Head {
			t.Errorf("%s: the legacy schema imports differently", c.Name)
		}
		for _, n := range c.Nodes {
			if n.IsSummary() {
				summaries++
			}
		}
	}
	if summaries != 1 {
		t.Errorf("%d summaries, want 1", summaries)
	}
}

// TestRepeatedCallID: a message whose provider gave two calls one id
// (seen in a real database: two writes of one file, both answered) keeps
// the first call and its result; the repeat is skipped and warned, its
// result kept as text, so the store's one-result-per-call holds.
func TestRepeatedCallID(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crush.db")
	buildDB(t, path)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for id, typ := range map[string]string{"0c5e0001-0000-4000-8000-000000000002": "tool_call", "0c5e0001-0000-4000-8000-000000000003": "tool_result"} {
		var raw string
		if err := db.QueryRow(`SELECT parts FROM messages WHERE id = ?`, id).Scan(&raw); err != nil {
			t.Fatal(err)
		}
		var parts []json.RawMessage
		json.Unmarshal([]byte(raw), &parts)
		for _, p := range parts {
			if bytes.Contains(p, []byte(`"type":"`+typ+`"`)) {
				parts = append(parts, p)
				break
			}
		}
		doubled, _ := json.Marshal(parts)
		if _, err := db.Exec(`UPDATE messages SET parts = ? WHERE id = ?`, string(doubled), id); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	var tg importtest.Target
	if err := crush.Import(context.Background(), []string{path}, crush.Options{}, &tg); err != nil {
		t.Fatal(err)
	}
	c := tg.Convs[0]
	results, texts := 0, 0
	for _, n := range c.Nodes {
		if n.ToolCallID == "call_1" {
			results++
		}
		if strings.HasPrefix(n.Content.Text, "[tool_result for call_1]") {
			texts++
		}
	}
	if results != 1 || texts != 1 || c.Counts[[2]string{"part/tool_call", transcript.OutcomeSkipped}] != 1 || len(c.Warnings) != 2 {
		t.Errorf("%d results, %d kept as text, counts %v, warnings %q", results, texts, c.Counts, c.Warnings)
	}
}
