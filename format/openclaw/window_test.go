package openclaw_test

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/format/openclaw"
)

// recordedStore writes the interop recording's rows (fake/gpt-5.4) into
// an openclaw-agent.sqlite.
func recordedStore(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), openclaw.StoreName)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT,
		created_at INTEGER NOT NULL, event_zstd BLOB, event_utf8_bytes INTEGER, navigation_json TEXT, PRIMARY KEY (session_id, seq)) STRICT`); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("../../testdata/interop/openclaw/2026.9.6/compaction/transcript_events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
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
		if _, err := db.Exec(`INSERT INTO transcript_events (session_id, seq, created_at, event_json) VALUES (?, ?, ?, ?)`,
			r.SessionID, r.Seq, r.CreatedAt, string(r.Event)); err != nil {
			t.Fatal(err)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestConfiguredWindow(t *testing.T) {
	store := recordedStore(t)
	window := func(home string, vars map[string]string) int64 {
		t.Helper()
		env := input.Env{Home: home, Getenv: func(k string) string { return vars[k] }}
		tg, err := load(t, store, input.Options{Env: env})
		if err != nil {
			t.Fatal(err)
		}
		return tg.Convs[0].Window
	}
	write := func(path, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// As interop/openclaw/record.sh writes it.
	recorded := `{"agents": {"defaults": {"model": {"primary": "fake/gpt-5.4"}, "workspace": "/tmp/w",
   "compaction": {"mode": "default", "keepRecentTokens": 20}}},
 "models": {"mode": "merge", "providers": {"fake": {"baseUrl": "http://127.0.0.1:1/v1", "apiKey": "dummy", "api": "openai-completions",
   "models": [{"id": "gpt-5.4", "name": "fake", "reasoning": false, "input": ["text"], "contextWindow": 128000, "maxTokens": 100}]}}}}`
	home := t.TempDir()
	if w := window(home, nil); w != 0 {
		t.Fatalf("no openclaw.json: window %d, want 0", w)
	}
	write(filepath.Join(home, ".openclaw", "openclaw.json"), recorded)
	if w := window(home, nil); w != 128000 {
		t.Fatalf("record.sh's openclaw.json: window %d, want 128000", w)
	}
	// OPENCLAW_STATE_DIR and OPENCLAW_CONFIG_PATH move it.
	state := t.TempDir()
	write(filepath.Join(state, "openclaw.json"), `{"models":{"providers":{"fake":{"models":[{"id":"gpt-5.4","contextWindow":64000}]}}}}`)
	if w := window(home, map[string]string{"OPENCLAW_STATE_DIR": state}); w != 64000 {
		t.Fatalf("OPENCLAW_STATE_DIR: window %d, want 64000", w)
	}
	other := filepath.Join(t.TempDir(), "cfg.json")
	write(other, `{"models":{"providers":{"fake":{"models":[{"id":"gpt-5.4","contextWindow":32000}]}}}}`)
	if w := window(home, map[string]string{"OPENCLAW_STATE_DIR": state, "OPENCLAW_CONFIG_PATH": other}); w != 32000 {
		t.Fatalf("OPENCLAW_CONFIG_PATH: window %d, want 32000", w)
	}
	// Another provider's model of the same id does not count.
	write(other, `{"models":{"providers":{"other":{"models":[{"id":"gpt-5.4","contextWindow":5}]}}}}`)
	if w := window(home, map[string]string{"OPENCLAW_CONFIG_PATH": other}); w != 0 {
		t.Fatalf("another provider: window %d, want 0", w)
	}
}
