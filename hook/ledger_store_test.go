package hook

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/ctxfold/ctxfold/format/input"
)

// openCodeStore loads OpenCode 1.18.33's recorded compaction session
// (testdata/interop/opencode) into <data>/opencode/opencode.db, where
// OpenCode keeps it, and returns the data folder and the session's id.
func openCodeStore(t *testing.T) (data, id string) {
	t.Helper()
	script, err := os.ReadFile(filepath.Join("..", "testdata", "interop", "opencode", "1.18.33", "compaction", "db.sql"))
	if err != nil {
		t.Fatal(err)
	}
	data = t.TempDir()
	_ = os.MkdirAll(filepath.Join(data, "opencode"), 0o755)
	db, err := sql.Open("sqlite", filepath.Join(data, "opencode", "opencode.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(string(script)); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT id FROM session").Scan(&id); err != nil {
		t.Fatal(err)
	}
	return data, id
}

// OpenCode's plugin names the session by its id alone: the hook finds it
// in OpenCode's database and hands back the ledger of the turns after its
// last summary; an id the database does not hold is an error.
func TestLedgerLocatesAStoreSession(t *testing.T) {
	data, id := openCodeStore(t)
	env := input.Env{Home: t.TempDir(), Getenv: func(k string) string {
		if k == "XDG_DATA_HOME" {
			return data
		}
		return ""
	}}
	cache := t.TempDir()
	parse := func(id string) Input {
		b, _ := json.Marshal(map[string]string{"hook_event_name": "experimental.session.compacting", "session_id": id})
		in, err := ParseAs(DialectOf("OpenCode"), b)
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	res, err := Run(context.Background(), parse(id), Options{CacheDir: cache, Client: "OpenCode", Env: env})
	if err != nil {
		t.Fatal(err)
	}
	text := ledgerText(t, res.Output)
	if !strings.Contains(text, KeepOpen) || !strings.Contains(text, "One more turn.") || strings.Contains(text, "List the files here") {
		t.Errorf("the ledger of the turns after the summary:\n%s", text)
	}
	states, _ := filepath.Glob(filepath.Join(cache, "hook", "*.json"))
	if len(states) != 1 {
		t.Fatalf("%d state files", len(states))
	}
	if _, err := Run(context.Background(), parse("ses_nothere"), Options{CacheDir: cache, Client: "OpenCode", Env: env}); err == nil ||
		!strings.Contains(err.Error(), "ses_nothere") {
		t.Errorf("an unknown session: %v", err)
	}
}

// The recall hint of a store's session names the session.
func TestRecallArgOfAStore(t *testing.T) {
	data, id := openCodeStore(t)
	db := filepath.Join(data, "opencode", "opencode.db")
	if got := recallArg(Input{TranscriptPath: db, SessionID: id}); got != db+" --session "+id {
		t.Errorf("store: %q", got)
	}
	if got := recallArg(Input{TranscriptPath: recorded, SessionID: "x"}); got != recorded {
		t.Errorf("file: %q", got)
	}
}
