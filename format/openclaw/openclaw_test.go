package openclaw_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/format/openclaw"
	"github.com/ctxfold/ctxfold/format/pi"
	"github.com/ctxfold/ctxfold/internal/importtest"
	"github.com/ctxfold/ctxfold/transcript"
)

var imp = openclaw.Importer(func(s transcript.ImportSink, f string) openclaw.Decoder { return pi.NewDecoder(s, f) })

// buildStore writes an openclaw-agent.sqlite under dir from the fixture's
// rows; the rows of tree-2 with an even seq are stored zstd-compressed.
// extra rows (session, seq, event) are added as they are.
func buildStore(t *testing.T, dir string, extra ...[3]string) string {
	t.Helper()
	path := filepath.Join(dir, openclaw.StoreName)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT,
		created_at INTEGER NOT NULL, event_zstd BLOB, event_utf8_bytes INTEGER, navigation_json TEXT, PRIMARY KEY (session_id, seq)) STRICT`); err != nil {
		t.Fatal(err)
	}
	enc, _ := zstd.NewWriter(nil)
	f, err := os.Open("../../fixtures/import/openclaw/transcript_events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct {
			SessionID string          `json:"session_id"`
			Seq       int64           `json:"seq"`
			CreatedAt int64           `json:"created_at"`
			Event     json.RawMessage `json:"event"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if r.SessionID == "tree-2" && r.Seq%2 == 0 {
			_, err = db.Exec(`INSERT INTO transcript_events (session_id, seq, created_at, event_zstd, event_utf8_bytes, navigation_json) VALUES (?, ?, ?, ?, ?, '{}')`,
				r.SessionID, r.Seq, r.CreatedAt, enc.EncodeAll(r.Event, nil), len(r.Event))
		} else {
			_, err = db.Exec(`INSERT INTO transcript_events (session_id, seq, created_at, event_json) VALUES (?, ?, ?, ?)`, r.SessionID, r.Seq, r.CreatedAt, string(r.Event))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for i, e := range extra {
		if _, err := db.Exec(`INSERT INTO transcript_events (session_id, seq, created_at, event_json) VALUES (?, ?, ?, ?)`, e[0], e[1], 1900000000000+int64(i), e[2]); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func load(t *testing.T, path string, opts input.Options) (*importtest.Target, error) {
	t.Helper()
	var tg importtest.Target
	err := imp(context.Background(), []string{path}, opts, &tg)
	return &tg, err
}

func TestImportSessions(t *testing.T) {
	path := buildStore(t, t.TempDir())
	tg, err := load(t, path, input.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tg.Convs) != 2 || tg.Convs[0].Name != "chat-1" || tg.Convs[1].Name != "tree-2" {
		t.Fatalf("conversations %d", len(tg.Convs))
	}
	chat := tg.Convs[0]
	if len(chat.Nodes) != 2 || chat.Model != "gpt-5.4" || chat.Head != chat.Nodes[1].ID || chat.Nodes[1].Usage == nil || chat.Nodes[1].Usage.InputTokens != 15398 {
		t.Errorf("chat: %d nodes, model %q, head %q", len(chat.Nodes), chat.Model, chat.Head)
	}
	if chat.Counts[[2]string{"custom", transcript.OutcomeSkipped}] != 2 {
		t.Errorf("chat counts %v", chat.Counts)
	}
	tree := tg.Convs[1]
	var summary *transcript.Node
	for i := range tree.Nodes {
		if tree.Nodes[i].ID == "summary_k1" {
			summary = &tree.Nodes[i]
		}
	}
	// Half of tree-2's rows are compressed: the same nodes as pi's file.
	if len(tree.Nodes) != 12 || summary == nil || string(summary.Metadata["covers_ids"]) != `["u1","a1","t1","a2","b1","x1","c1"]` || tree.Head != "u4" {
		t.Fatalf("tree: %d nodes, summary %v, head %q", len(tree.Nodes), summary, tree.Head)
	}
}

func TestSessionOptions(t *testing.T) {
	path := buildStore(t, t.TempDir())
	for _, tc := range []struct {
		opts input.Options
		want string
	}{{input.Options{SessionID: "chat-1"}, "chat-1"}, {input.Options{Latest: true}, "tree-2"}, {input.Options{Session: 1}, "chat-1"}} {
		tg, err := load(t, path, tc.opts)
		if err != nil || len(tg.Convs) != 1 || tg.Convs[0].Name != tc.want {
			t.Errorf("%+v: err %v, %d conversations", tc.opts, err, len(tg.Convs))
		}
	}
	_, err := load(t, path, input.Options{SessionID: "nope"})
	if err == nil || !strings.Contains(err.Error(), `no session "nope"`) || !strings.Contains(err.Error(), "chat-1") {
		t.Errorf("unknown session: %v", err)
	}
}

func TestBadRow(t *testing.T) {
	path := buildStore(t, t.TempDir(), [3]string{"bad-3", "7", "{not json"})
	_, err := load(t, path, input.Options{SessionID: "bad-3"})
	var pe *transcript.ParseError
	if !errors.As(err, &pe) || pe.Line != 7 || !strings.Contains(err.Error(), "session bad-3") {
		t.Errorf("error %v: want a ParseError at seq 7 naming the session", err)
	}
	notDB := filepath.Join(t.TempDir(), openclaw.StoreName)
	os.WriteFile(notDB, []byte("hello"), 0o644)
	if _, err := load(t, notDB, input.Options{}); !errors.As(err, &pe) {
		t.Errorf("not a database: %v", err)
	}
}

func TestDetectAndFind(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".openclaw", "agents", "main", "agent")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := buildStore(t, dir)
	if !openclaw.DetectPath(path) || openclaw.DetectPath(filepath.Join(dir, "other.sqlite")) {
		t.Error("DetectPath")
	}
	if openclaw.Detect([]byte("SQLite format 3\x00 message part session_id")) || !openclaw.Detect([]byte("SQLite format 3\x00 CREATE TABLE transcript_events")) {
		t.Error("Detect")
	}
	found, err := openclaw.Find(input.Env{Home: home})
	if err != nil || len(found) != 2 || found[0].File != path || found[1].SessionID != "tree-2" || found[1].Updated.UnixMilli() != 1796568500018 ||
		found[0].Project != "/tmp/ctxfold-openclaw/work" || found[0].Model != "gpt-5.4" || found[1].Model != "claude-sonnet-4-5" {
		t.Errorf("found %+v, %v", found, err)
	}
	if got, err := openclaw.Find(input.Env{Home: t.TempDir()}); err != nil || len(got) != 0 {
		t.Errorf("no OpenClaw: %v %v", got, err)
	}
}

// FuzzImport: a hostile event in a row either imports or fails with a
// ParseError, never a panic.
func FuzzImport(f *testing.F) {
	f.Add([]byte(`{"type":"message","id":"u","parentId":null,"message":{"role":"user","content":"x"}}`))
	f.Add([]byte(`{"type":"compaction","id":"k","parentId":"u","summary":"s","firstKeptEntryId":"u"}`))
	f.Add([]byte(`{"type":"session","version":4,"id":"s","timestamp":"t","cwd":"/"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := buildStore(t, t.TempDir(), [3]string{"fuzz", "1", string(data)})
		_, err := load(t, path, input.Options{SessionID: "fuzz", MaxLineBytes: 1 << 16})
		var pe *transcript.ParseError
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("not a parse error: %v", err)
		}
	})
}
