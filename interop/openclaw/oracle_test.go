// Package openclaw_test holds the OpenClaw oracle tests
// (docs/INTEROP-openclaw.md): the transcript_events rows interop/openclaw/
// record.sh recorded with the real client against the fake provider are
// put back in a database, imported, verified and rendered, and each render
// is compared with the request OpenClaw actually sent.
package openclaw_test

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/ctxfold/ctxfold/internal/interoptest"
	"github.com/ctxfold/ctxfold/transcript"
)

// The shared in-process runner and JSON difference (internal/interoptest).
var (
	ctxfold = interoptest.Ctxfold
	must    = interoptest.Must
	diff    = interoptest.Diff
)

// Version is the pinned client.
const Version = "2026.9.6"

func fixturesOf(v string) string {
	return filepath.Join("..", "..", "testdata", "interop", "openclaw", v)
}

// notSent lists the entry types the importer may skip, with why OpenClaw
// never sends them.
var notSent = map[string]string{
	"thinking_level_change": "a setting",
	"custom":                "OpenClaw's bookkeeping (model snapshots, cache TTLs, bootstrap markers)",
}

// summarizerPrompt opens the system prompt of OpenClaw's compaction
// requests (pi's SUMMARIZATION_SYSTEM_PROMPT, as OpenClaw words it).
const summarizerPrompt = "You are a context summarization assistant."

type row struct {
	SessionID string          `json:"session_id"`
	Seq       int64           `json:"seq"`
	CreatedAt int64           `json:"created_at"`
	Event     json.RawMessage `json:"event"`
}

type scenario struct {
	name     string
	rows     []row
	requests map[int]map[string]any
}

func scenarios(t *testing.T, root string) []scenario {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(root, "*"))
	var out []scenario
	for _, d := range dirs {
		s := scenario{name: filepath.Base(d), requests: map[int]map[string]any{}}
		f, err := os.Open(filepath.Join(d, "transcript_events.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var r row
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			s.rows = append(s.rows, r)
		}
		f.Close()
		files, _ := filepath.Glob(filepath.Join(d, "requests", "request-*.json"))
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var req map[string]any
			if err := json.Unmarshal(data, &req); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			seq, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(file), "request-"), ".json"))
			s.requests[seq] = req
		}
		if len(s.rows) == 0 || len(s.requests) == 0 {
			t.Fatalf("%s: no rows or no requests", d)
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		t.Fatalf("no scenario under %s", root)
	}
	return out
}

// store writes rows into a new openclaw-agent.sqlite (transcript_events as
// OpenClaw 2026.9.6 declares its columns) and returns its path.
func store(t *testing.T, rows []row) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "openclaw-agent.sqlite")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT,
		created_at INTEGER NOT NULL, event_zstd BLOB, event_utf8_bytes INTEGER, navigation_json TEXT, PRIMARY KEY (session_id, seq)) STRICT`); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if _, err := db.Exec(`INSERT INTO transcript_events (session_id, seq, created_at, event_json) VALUES (?, ?, ?, ?)`, r.SessionID, r.Seq, r.CreatedAt, string(r.Event)); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// importStore imports the database (auto-detected), checks the report and
// verify --strict, and returns the session directory.
func importStore(t *testing.T, path string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "s")
	out := must(t, "import", path, "-o", dir, "--json")
	var rep struct {
		Format  string `json:"format"`
		Records []struct {
			Record  string `json:"record"`
			Skipped int    `json:"skipped"`
		} `json:"records"`
		Warnings []json.RawMessage `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("import --json: %v\n%s", err, out)
	}
	if rep.Format != "openclaw" || len(rep.Warnings) != 0 {
		t.Errorf("import: format %q, warnings %s", rep.Format, rep.Warnings)
	}
	for _, r := range rep.Records {
		if r.Skipped > 0 && notSent[r.Record] == "" {
			t.Errorf("import skipped %d %q record(s): does it reach the model?", r.Skipped, r.Record)
		}
	}
	must(t, "verify", "--strict", dir)
	return dir
}

var (
	stampRE   = regexp.MustCompile(`^\[[A-Z][a-z]{2} \d{4}-\d{2}-\d{2} \d{2}:\d{2} [A-Z]+\] `)
	runtimeRE = regexp.MustCompile(`(?s)\n\nRuntime: .*$`)
)

// normalize applies docs/INTEROP-openclaw.md's normalisation to Chat
// Completions messages: pi's (the system message dropped, a string and a
// list of text parts both the list of their texts, "content": null beside
// tool calls dropped, the summary node's prefix removed) and OpenClaw's
// own decorations of what it sends: its internal-context user message is
// dropped, the time stamp before and the Runtime line after a user's text
// (or the Runtime text part it adds to the first user message) are
// removed, and tool-call ids keep their letters and digits only.
func normalize(msgs []any) []any {
	var out []any
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		if mm["role"] == "system" || mm["role"] == "developer" {
			continue
		}
		c := map[string]any{}
		for k, v := range mm {
			c[k] = v
		}
		var texts []any
		switch v := c["content"].(type) {
		case nil:
			delete(c, "content")
		case string:
			texts = []any{v}
		case []any:
			for _, p := range v {
				pm, _ := p.(map[string]any)
				if pm["type"] != "text" {
					texts = append(texts, p)
					continue
				}
				texts = append(texts, pm["text"])
			}
		}
		if c["content"] != nil {
			internal := false
			for i, x := range texts {
				s, ok := x.(string)
				if !ok {
					continue
				}
				internal = internal || strings.HasPrefix(s, "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>")
				s = strings.TrimPrefix(s, transcript.SummaryPrefix)
				if c["role"] == "user" {
					s = runtimeRE.ReplaceAllString(stampRE.ReplaceAllString(s, ""), "")
				}
				texts[i] = s
			}
			if internal {
				continue
			}
			kept := texts[:0]
			for _, x := range texts {
				if s, ok := x.(string); !ok || c["role"] != "user" || !strings.HasPrefix(s, "Runtime: ") {
					kept = append(kept, x)
				}
			}
			c["content"] = kept
		}
		sanitizeCalls(c)
		out = append(out, c)
	}
	return out
}

// sanitizeCalls keeps only the letters and digits of tool-call ids, as
// OpenClaw does when it sends them (call_fake_001 goes out as callfake001).
func sanitizeCalls(m map[string]any) {
	clean := func(id any) any {
		s, _ := id.(string)
		return nonAlnumRE.ReplaceAllString(s, "")
	}
	if id, ok := m["tool_call_id"]; ok {
		m["tool_call_id"] = clean(id)
	}
	calls, _ := m["tool_calls"].([]any)
	for _, call := range calls {
		if cm, ok := call.(map[string]any); ok {
			cm["id"] = clean(cm["id"])
		}
	}
}

var nonAlnumRE = regexp.MustCompile(`[^A-Za-z0-9]`)

func isCompaction(req map[string]any) bool {
	msgs, _ := req["messages"].([]any)
	if len(msgs) == 0 {
		return false
	}
	first, _ := msgs[0].(map[string]any)
	text, _ := first["content"].(string)
	return first["role"] == "system" && strings.HasPrefix(text, summarizerPrompt)
}

// answers maps the fake's request number to the index of the row holding
// the assistant message that answered it (its responseId).
func answers(t *testing.T, rows []row) map[int]int {
	t.Helper()
	out := map[int]int{}
	for i, r := range rows {
		var e struct {
			Message struct {
				Role       string `json:"role"`
				ResponseID string `json:"responseId"`
			} `json:"message"`
		}
		_ = json.Unmarshal(r.Event, &e)
		if e.Message.Role == "assistant" {
			seq, err := strconv.Atoi(strings.TrimPrefix(e.Message.ResponseID, "chatcmpl-fake-"))
			if err != nil {
				t.Fatalf("row %d: assistant with responseId %q", r.Seq, e.Message.ResponseID)
			}
			out[seq] = i
		}
	}
	return out
}

// TestOracle imports every scenario whole (verify --strict clean, a
// summary node for OpenClaw's compaction), then checks every captured
// request: the session's rows before the assistant entry that answered it
// import with HEAD at the leaf, and render --format openai equals the
// request's messages after the normalisation; each other request is a
// compaction request.
func TestOracle(t *testing.T) {
	for _, s := range scenarios(t, fixturesOf(Version)) {
		t.Run(s.name, func(t *testing.T) { checkRenders(t, s) })
	}
}

func checkRenders(t *testing.T, s scenario) {
	t.Helper()
	dir := importStore(t, store(t, s.rows))
	compactions := 0
	for _, r := range s.rows {
		if bytes.HasPrefix(r.Event, []byte(`{"type":"compaction"`)) {
			compactions++
		}
	}
	if got := strings.Count(must(t, "render", dir, "--format", "ids"), transcript.SummaryIDPrefix); compactions > 0 && got != 1 {
		t.Errorf("%d compaction entries, %d summaries in the rendered view", compactions, got)
	}
	at := answers(t, s.rows)
	var seqs []int
	for seq := range s.requests {
		seqs = append(seqs, seq)
	}
	sort.Ints(seqs)
	asked := 0
	for _, seq := range seqs {
		req := s.requests[seq]
		i, ok := at[seq]
		if !ok {
			if !isCompaction(req) {
				t.Errorf("request %d has no assistant entry and is no compaction", seq)
			}
			asked++
			continue
		}
		prefix := importStore(t, store(t, s.rows[:i]))
		var got []any
		if err := json.Unmarshal([]byte(must(t, "render", prefix, "--format", "openai")), &got); err != nil {
			t.Fatal(err)
		}
		sent, _ := req["messages"].([]any)
		if g, w := normalize(got), normalize(sent); !reflect.DeepEqual(g, w) {
			t.Errorf("request %d: render differs from what OpenClaw sent, %s", seq, diff(g, w))
		}
	}
	if compactions > 0 && asked < compactions {
		t.Errorf("%d compaction entries but %d compaction requests", compactions, asked)
	}
}
