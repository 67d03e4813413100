package archive

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/store"
)

// phrase is a query whose words only one file of the test home holds.
type phrase struct {
	query, client, file string
}

// testHome lays real transcripts out where each client keeps them: the
// repository's real-client recordings (as cmd's sessionsHome does) and the
// shared real transcripts, copied into a temporary HOME since the test
// deletes and appends to them.
func testHome(t *testing.T) (input.Env, []phrase) {
	t.Helper()
	home, codexHome := t.TempDir(), t.TempDir()
	place := func(src, dst string) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	claude := filepath.Join(home, ".claude", "projects", "-interop-work")
	place("../testdata/interop/claude-code/2.1.328/compact/transcript/00000000-0000-4000-8000-000000000001.jsonl",
		filepath.Join(claude, "00000000-0000-4000-8000-000000000001.jsonl"))
	codexRollout := "rollout-2026-01-01T00-00-00-00000000-0000-7000-8000-000000000001.jsonl"
	place("../testdata/interop/codex/0.169.0/tool/"+codexRollout, filepath.Join(codexHome, "sessions", "2026", "01", "01", codexRollout))
	gem := filepath.Join(home, ".gemini", "tmp", "proj", "chats")
	place("../testdata/interop/gemini-cli/0.61.0/chat/chats/session-2026-01-01T00-00-00000001.jsonl",
		filepath.Join(gem, "session-2026-01-01T00-00-00000001.jsonl"))
	phrases := []phrase{
		{`"Before compaction turn one"`, "claude-code", "00000000-0000-4000-8000-000000000001.jsonl"},
		{`"hello from the tool"`, "codex", codexRollout},
		{`"Hello fake Gemini"`, "gemini", "session-2026-01-01T00-00-00000001.jsonl"},
	}
	if sessiontest.SharedRoot() != "" {
		spotter := "258c7280-ae70-4798-800f-63464d01a85d"
		place(sessiontest.External(t, "claude-code", "marot-spotter", spotter+".jsonl"), filepath.Join(home, ".claude", "projects", "-spotter", spotter+".jsonl"))
		acidic := "rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"
		place(sessiontest.External(t, "codex", "AcidicSoil-codex-session-view", acidic), filepath.Join(codexHome, "sessions", "2025", "11", "17", acidic))
		place(sessiontest.External(t, "gemini-cli", "jazzyalex-agent-sessions", "jsonl_v040.jsonl"), filepath.Join(gem, "session-2026-04-29T21-39-00000002.jsonl"))
		phrases = append(phrases,
			phrase{`"Implement spotter gqc"`, "claude-code", spotter + ".jsonl"},
			phrase{`implementatiion`, "codex", acidic},
			phrase{`"Say hello and list files"`, "gemini", "session-2026-04-29T21-39-00000002.jsonl"})
	}
	vars := map[string]string{"HOME": home, "CODEX_HOME": codexHome}
	return input.Env{Home: home, Getenv: func(k string) string { return vars[k] }}, phrases
}

func run(t *testing.T, env input.Env, dir string) Counts {
	t.Helper()
	c, errs, err := Run(context.Background(), Options{Dir: dir, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		t.Errorf("archive: %v", e)
	}
	return c
}

func TestArchiveKeepsSessionsTheClientDeleted(t *testing.T) {
	env, phrases := testHome(t)
	dir := t.TempDir()
	c := run(t, env, dir)
	if c.Files != len(phrases) || c.New != len(phrases) || c.Failed != 0 || c.Indexed == 0 {
		t.Fatalf("first run: %+v, want %d new files", c, len(phrases))
	}
	// The clients delete their files (Claude Code's cleanupPeriodDays).
	if err := os.RemoveAll(env.Home); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(env.Get("CODEX_HOME")); err != nil {
		t.Fatal(err)
	}
	if c := run(t, env, dir); c.Files != 0 {
		t.Fatalf("after deletion: %+v", c)
	}
	for _, p := range phrases {
		hits, err := Search(context.Background(), dir, SearchOptions{Query: p.query})
		if err != nil {
			t.Fatalf("%s: %v", p.query, err)
		}
		if len(hits) == 0 {
			t.Errorf("%s: no hit in the archive", p.query)
			continue
		}
		for _, h := range hits {
			if h.Client != p.client || filepath.Base(h.File) != p.file {
				t.Errorf("%s: hit in %s %s, want only %s %s", p.query, h.Client, h.File, p.client, p.file)
			}
			checkHitOpens(t, h)
			// The snippet is cut from the node around the query's words.
			word := strings.Fields(strings.Trim(p.query, `"`))[0]
			if !strings.Contains(strings.ToLower(h.Snippet), strings.ToLower(word)) {
				t.Errorf("%s: snippet %q lacks %q", p.query, h.Snippet, word)
			}
		}
	}
}

// checkHitOpens opens the hit's node in its archived session, as render
// --head does, and checks its status is one Search gives.
func checkHitOpens(t *testing.T, h Hit) {
	t.Helper()
	g, err := dag.Open(h.Session, store.OpenOptions{})
	if err != nil {
		t.Fatalf("%s: %v", h.Session, err)
	}
	defer g.S.Close()
	if _, ok := g.Lookup(h.NodeID); !ok || h.NodeID == "" {
		t.Errorf("hit %q not in %s", h.NodeID, h.Session)
	}
	switch h.Status {
	case "visible", "covered", "off-branch", "relic":
	default:
		t.Errorf("hit %s: status %q", h.NodeID, h.Status)
	}
}

func TestArchiveAppendedTurnCostsItsBytes(t *testing.T) {
	file := sessiontest.External(t, "claude-code", "marot-spotter", "258c7280-ae70-4798-800f-63464d01a85d.jsonl")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	dst := filepath.Join(home, ".claude", "projects", "-p", filepath.Base(file))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
	env := input.Env{Home: home, Getenv: func(k string) string { return map[string]string{"HOME": home}[k] }}
	dir := t.TempDir()
	first := run(t, env, dir)
	if first.New != 1 {
		t.Fatalf("first run: %+v", first)
	}
	if again := run(t, env, dir); again.Unchanged != 1 || again.Bytes != 0 || again.Indexed != 0 {
		t.Fatalf("unchanged run: %+v", again)
	}
	turn := appendedTurn(t, b, "zanzibarquux")
	f, err := os.OpenFile(dst, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(turn); err != nil {
		t.Fatal(err)
	}
	f.Close()
	c := run(t, env, dir)
	if c.Grown != 1 || c.Indexed < 1 || c.Indexed > 3 {
		t.Fatalf("after one appended turn: %+v (first run indexed %d)", c, first.Indexed)
	}
	if c.Bytes <= 0 || c.Bytes > int64(len(b))/20 {
		t.Fatalf("after one appended turn of %d bytes the run parsed %d of %d", len(turn), c.Bytes, len(b)+len(turn))
	}
	hits, err := Search(context.Background(), dir, SearchOptions{Query: "zanzibarquux"})
	if err != nil || len(hits) != 1 || hits[0].Role != "user" || hits[0].Status != "visible" {
		t.Fatalf("search for the appended turn: %+v, %v", hits, err)
	}
}

// appendedTurn is one more user line after the last line of a Claude Code
// session b: the last line with a uuid, cloned, its text replaced.
func appendedTurn(t *testing.T, b []byte, text string) []byte {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var last, user map[string]any
	for i := len(lines) - 1; i >= 0 && (last == nil || user == nil); i-- {
		var m map[string]any
		if json.Unmarshal([]byte(lines[i]), &m) != nil || m["uuid"] == nil {
			continue
		}
		if last == nil {
			last = m
		}
		if msg, ok := m["message"].(map[string]any); ok && user == nil && m["type"] == "user" {
			if _, isText := msg["content"].(string); isText {
				user = m
			}
		}
	}
	if last == nil || user == nil {
		t.Fatal("no line to clone")
	}
	user["parentUuid"] = last["uuid"]
	user["uuid"] = "ffffffff-0000-4000-8000-00000000abcd"
	user["message"] = map[string]any{"role": "user", "content": text}
	user["timestamp"] = last["timestamp"]
	out, err := json.Marshal(user)
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

func TestArchiveRewrittenFileKeepsTheOldVersion(t *testing.T) {
	env, phrases := testHome(t)
	dir := t.TempDir()
	run(t, env, dir)
	gem := filepath.Join(env.Home, ".gemini", "tmp", "proj", "chats", "session-2026-01-01T00-00-00000001.jsonl")
	b, err := os.ReadFile(gem)
	if err != nil {
		t.Fatal(err)
	}
	// The client rewrites its file: the first message says something else.
	b = []byte(strings.ReplaceAll(string(b), "Hello, fake Gemini. Say hi.", "Quetzalcoatl rewrote this."))
	if err := os.WriteFile(gem, b, 0o600); err != nil {
		t.Fatal(err)
	}
	c := run(t, env, dir)
	if c.Rewritten != 1 || c.Unchanged != len(phrases)-1 {
		t.Fatalf("after the rewrite: %+v", c)
	}
	for q, version := range map[string]bool{`"Hello fake Gemini"`: true, "Quetzalcoatl": false} {
		hits, err := Search(context.Background(), dir, SearchOptions{Query: q, Client: "gemini"})
		if err != nil || len(hits) == 0 {
			t.Fatalf("%s: %+v %v", q, hits, err)
		}
		for _, h := range hits {
			if h.Version != version {
				t.Errorf("%s: hit in %s, want only in the version (%v)", q, h.Session, version)
			}
			checkHitOpens(t, h)
		}
	}
}

func TestArchiveConcurrentRunsLeaveOneArchive(t *testing.T) {
	env, phrases := testHome(t)
	dir := t.TempDir()
	var wg sync.WaitGroup
	counts := make([]Counts, 2)
	for i := range counts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, errs, err := Run(context.Background(), Options{Dir: dir, Env: env})
			if err != nil || len(errs) > 0 {
				t.Errorf("run %d: %v %v", i, err, errs)
			}
			counts[i] = c
		}()
	}
	wg.Wait()
	if n := counts[0].New + counts[1].New; n != len(phrases) {
		t.Fatalf("two concurrent runs archived %d new files, want %d: %+v", n, len(phrases), counts)
	}
	checkConsistent(t, dir)
	if c := run(t, env, dir); c.Unchanged != len(phrases) || c.Indexed != 0 {
		t.Fatalf("a third run: %+v", c)
	}
}

// checkConsistent checks the index holds exactly the archive's nodes: one
// row per node of every archived session directory.
func checkConsistent(t *testing.T, dir string) {
	t.Helper()
	sessions, _ := filepath.Glob(filepath.Join(dir, "live", "*", "session"))
	versions, _ := filepath.Glob(filepath.Join(dir, "live", "*", "versions", "*"))
	want := 0
	for _, s := range append(sessions, versions...) {
		st, err := store.Open(s, store.OpenOptions{})
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		want += st.Len()
		st.Close()
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, IndexFile)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var got, fts int
	if err := db.QueryRow(`SELECT count(*) FROM nodes`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM fts`).Scan(&fts); err != nil {
		t.Fatal(err)
	}
	if got != want || fts != want || want == 0 {
		t.Fatalf("index holds %d nodes (%d texts), the archive %d", got, fts, want)
	}
	// And node for node, line for line (verify --archive's check).
	res, err := CheckIndex(context.Background(), dir)
	if err != nil || len(res.Findings) != 0 || res.Nodes != want {
		t.Fatalf("verify --archive: %v %+v (want %d nodes)", err, res, want)
	}
}

func TestArchiveCorruptIndexIsRebuilt(t *testing.T) {
	env, phrases := testHome(t)
	dir := t.TempDir()
	run(t, env, dir)
	p := filepath.Join(dir, IndexFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// Damage every page but the first (the header and schema).
	for i := 4096; i < len(b); i++ {
		b[i] ^= 0x5a
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	hits, err := Search(context.Background(), dir, SearchOptions{Query: phrases[0].query})
	if err != nil || len(hits) == 0 {
		t.Fatalf("search over a damaged index: %v %v", hits, err)
	}
	checkConsistent(t, dir)
	// A damaged index found by the run is rebuilt as well.
	b, _ = os.ReadFile(p)
	copy(b[:16], "not a database!!")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if c := run(t, env, dir); !c.Reindexed || c.Indexed == 0 {
		t.Fatalf("the run trusted a damaged index: %+v", c)
	}
	checkConsistent(t, dir)
}

// A session removed from the archive by hand leaves its hits shown, as
// unreadable, instead of failing every search.
func TestArchiveHitOfARemovedSessionIsShown(t *testing.T) {
	env, phrases := testHome(t)
	dir := t.TempDir()
	run(t, env, dir)
	hits, err := Search(context.Background(), dir, SearchOptions{Query: phrases[1].query})
	if err != nil || len(hits) == 0 {
		t.Fatal(hits, err)
	}
	if err := os.RemoveAll(hits[0].Session); err != nil {
		t.Fatal(err)
	}
	hits, err = Search(context.Background(), dir, SearchOptions{Query: phrases[1].query})
	if err != nil || len(hits) == 0 || hits[0].Status != StatusUnreadable {
		t.Fatalf("after removing the session: %+v %v", hits, err)
	}
}

// The archive is a live cache that nothing evicts: even a cache cap of one
// byte (live.Options.MaxBytes) keeps every entry.
func TestArchiveIsNeverEvicted(t *testing.T) {
	env, phrases := testHome(t)
	dir := t.TempDir()
	opts := Options{Dir: dir, Env: env}
	opts.Live.MaxBytes = 1
	for range 2 {
		if _, errs, err := Run(context.Background(), opts); err != nil || len(errs) > 0 {
			t.Fatal(err, errs)
		}
	}
	sessions, _ := filepath.Glob(filepath.Join(dir, "live", "*", "session"))
	if len(sessions) != len(phrases) {
		t.Fatalf("%d archived sessions left of %d", len(sessions), len(phrases))
	}
	checkConsistent(t, dir)
}
