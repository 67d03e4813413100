package live

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"
)

// A client's SQLite store in WAL mode (OpenCode's opencode.db) keeps its
// newest rows in the -wal beside it until a checkpoint: the database file
// itself does not change while the client writes. The cache notices the
// -wal, so estimate and statusline see a running session's new turns.
func TestSQLiteWALChange(t *testing.T) {
	script, err := os.ReadFile("../testdata/interop/opencode/1.18.33/chat/db.sql")
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "opencode.db")
	// The client's connection: WAL, no automatic checkpoint, kept open.
	conn, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	for _, q := range []string{"PRAGMA journal_mode=WAL", "PRAGMA wal_autocheckpoint=0", string(script)} {
		if _, err := conn.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	cache := t.TempDir()
	e, err := openClosed(context.Background(), db, Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	before := readNodes(t, e.Session)
	main, _ := os.ReadFile(db)
	// One more user turn, written as the client writes it: into the -wal.
	for _, q := range []string{
		`INSERT INTO message SELECT 'msg_zz_new', session_id, time_created + 100000, time_updated + 100000, data FROM message ORDER BY time_created DESC LIMIT 1`,
		`UPDATE message SET data = '{"role":"user","time":{"created":1896567486481}}' WHERE id = 'msg_zz_new'`,
		`INSERT INTO part SELECT 'prt_zz_new', 'msg_zz_new', session_id, time_created, time_updated, '{"type":"text","text":"a third turn"}' FROM part LIMIT 1`,
	} {
		if _, err := conn.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if now, _ := os.ReadFile(db); !bytes.Equal(now, main) {
		t.Skip("the write reached the database file itself: no -wal to test")
	}
	e, err = openClosed(context.Background(), db, Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	after := readNodes(t, e.Session)
	t.Logf("update after the -wal grew: %s (%s)", e.Update, e.Reason)
	if e.Update == Unchanged || !bytes.Contains(after, []byte("a third turn")) {
		t.Fatalf("update %q: the turn in the -wal is not in the cache session", e.Update)
	}
	if e.Update != Fresh || !bytes.HasPrefix(after, before[:len(before)-1]) {
		t.Errorf("update %q: a database is read afresh, and here it only grew", e.Update)
	}
	if !bytes.Equal(after, freshNodes(t, db)) {
		t.Error("the cache session differs from a fresh import")
	}
}
