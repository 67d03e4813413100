// Package opencode_test checks ctxfold against what the real OpenCode (and
// Kilo, which shares its code and schema) sent: the sessions recorded by
// interop/opencode/record.sh (docs/INTEROP-opencode.md) — the client's own
// `export` and its database tables — are imported, verified, rendered at
// the point each request was made and compared with the request's
// messages. The committed recordings need no client; CTXFOLD_INTEROP_LIVE=1
// re-records with the installed client first (live_test.go).
package opencode_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/ctxfold/ctxfold/internal/interoptest"
)

// The shared in-process runner and JSON difference (internal/interoptest).
var (
	ctxfold = interoptest.Ctxfold
)

// Versions are the recorded versions of each client the oracle runs on.
var Versions = map[string][]string{"opencode": {"1.18.33"}, "kilo": {"7.7.7", "7.7.9"}}

// scenarios of each client (Kilo: the ones recorded for it).
var scenarios = []string{"chat", "tool", "compaction", "compaction-tail"}

type request struct {
	Seq  int    `json:"seq"`
	Kind string `json:"kind"`
	Body struct {
		Messages []map[string]any `json:"messages"`
	} `json:"body"`
}

func readRequests(t *testing.T, dir string) []request {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []request
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var r request
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// buildDB loads the recorded tables (db.sql) into a fresh database named
// as the client names its own.
func buildDB(t *testing.T, dir, name string) string {
	t.Helper()
	script, err := os.ReadFile(filepath.Join(dir, "db.sql"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("PRAGMA journal_mode=WAL"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(string(script)); err != nil {
		t.Fatalf("db.sql: %v", err)
	}
	return path
}

type node struct {
	ID          string  `json:"id"`
	Role        string  `json:"role"`
	Predecessor *string `json:"predecessor"`
	Metadata    struct {
		Compaction bool     `json:"compaction"`
		Covers     []string `json:"covers_ids"`
	} `json:"metadata"`
}

func readNodes(t *testing.T, sess string) ([]node, []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(sess, "nodes.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []node
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var n node
		if err := json.Unmarshal(line, &n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out, data
}

// importChecked imports file (auto-detected: an export is OpenCode's,
// Kilo's database is kilo by its name), checks that no record that
// reached the model was skipped, and verifies the session.
func importChecked(t *testing.T, client, file string, extra ...string) string {
	t.Helper()
	sess := filepath.Join(t.TempDir(), "s")
	out, errOut, code := ctxfold(t, append([]string{"import", "--json", file, "-o", sess}, extra...)...)
	if code != 0 {
		t.Fatalf("import %s: exit %d: %s", file, code, errOut)
	}
	var rep struct {
		Format  string `json:"format"`
		Records []struct {
			Record  string `json:"record"`
			Skipped int    `json:"skipped"`
		} `json:"records"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("import --json: %v\n%s", err, out)
	}
	want := "opencode"
	if client == "kilo" && strings.HasSuffix(file, ".db") {
		want = "kilo"
	}
	if rep.Format != want {
		t.Errorf("%s: detected %q, want %q", file, rep.Format, want)
	}
	for _, r := range rep.Records {
		if r.Skipped > 0 {
			t.Errorf("%s: import skipped %d %s record(s)", file, r.Skipped, r.Record)
		}
	}
	if _, errOut, code := ctxfold(t, "verify", "--strict", sess); code != 0 {
		t.Fatalf("verify --strict: exit %d: %s", code, errOut)
	}
	return sess
}

// normalize applies the rules of docs/INTEROP-opencode.md to a message
// list, in place: system messages are dropped (the client keeps no system
// prompt in its store), an assistant message that only calls tools has no
// content (the AI SDK sends "" or null), for Kilo the
// <environment_details> part it appends to the last user message at
// request time (never stored) is dropped, and a user message of several
// text parts is their texts joined by "\n" (the import's one text).
func normalize(msgs []map[string]any) []map[string]any {
	var out []map[string]any
	for _, m := range msgs {
		if m["role"] == "system" {
			continue
		}
		if m["role"] == "assistant" && m["tool_calls"] != nil && (m["content"] == nil || m["content"] == "") {
			delete(m, "content")
		}
		if parts, ok := m["content"].([]any); ok && m["role"] == "user" {
			var kept []any
			for _, p := range parts {
				pm, _ := p.(map[string]any)
				if text, _ := pm["text"].(string); strings.HasPrefix(strings.TrimSpace(text), "<environment_details>") {
					continue
				}
				kept = append(kept, p)
			}
			// Text parts only: one string, the texts joined by "\n", as
			// the import joins a message's text parts (render cannot send
			// several text parts; the AI SDK sends one as a string).
			var texts []string
			for _, p := range kept {
				pm, _ := p.(map[string]any)
				text, isText := pm["text"].(string)
				if pm["type"] != "text" || !isText {
					texts = nil
					break
				}
				texts = append(texts, text)
			}
			if texts != nil {
				m["content"] = strings.Join(texts, "\n")
			} else {
				m["content"] = kept
			}
		}
		out = append(out, m)
	}
	return out
}

func pretty(v any) string {
	b, _ := json.MarshalIndent(v, "", " ")
	return string(b)
}

// TestOracle imports every committed recording of every client version
// and compares render with each request the client sent.
func TestOracle(t *testing.T) {
	n := 0
	for client, versions := range Versions {
		for _, v := range versions {
			for _, sc := range scenarios {
				dir := filepath.Join("../../testdata/interop", client, v, sc)
				if _, err := os.Stat(dir); err != nil {
					continue
				}
				n++
				t.Run(client+"/"+v+"/"+sc, func(t *testing.T) { oracle(t, client, dir) })
			}
		}
	}
	if n == 0 {
		t.Fatal("no recording")
	}
}

func oracle(t *testing.T, client, dir string) {
	// 1. The client's export and its database import alike, verified.
	exports, _ := filepath.Glob(filepath.Join(dir, "export-*.json"))
	if len(exports) != 1 {
		t.Fatalf("%d exports; every scenario is one session", len(exports))
	}
	sess := importChecked(t, client, exports[0])
	db := buildDB(t, dir, client+".db")
	fromDB := importChecked(t, client, db)
	nodes, data := readNodes(t, sess)
	if _, dbData := readNodes(t, fromDB); !bytes.Equal(data, dbData) {
		t.Errorf("the export and the database import differently:\n%s\n---\n%s", data, dbData)
	}

	// 2. Each main request is answered by the next assistant node (one a
	// step); render at its predecessor equals the request's messages. A
	// request made before the compaction read the history raw.
	var answers []node
	summaries, summarySeen := 0, false
	raw := map[string]bool{}
	for _, n := range nodes {
		if n.Metadata.Compaction {
			summaries++
			summarySeen = true
		}
		if n.Role == "assistant" {
			answers = append(answers, n)
			raw[n.ID] = !summarySeen
		}
	}
	var mains []request
	summarize := 0
	for _, r := range readRequests(t, dir) {
		switch r.Kind {
		case "main":
			mains = append(mains, r)
		case "summarize":
			summarize++
		}
	}
	if len(mains) != len(answers) {
		t.Fatalf("%d assistant nodes for %d main requests", len(answers), len(mains))
	}
	if summarize != summaries {
		t.Errorf("%d summarizer requests, %d summary nodes", summarize, summaries)
	}
	for k, req := range mains {
		a := answers[k]
		if a.Predecessor == nil {
			t.Fatalf("request %d: answer %s is a root", req.Seq, a.ID)
		}
		args := []string{"render", sess, "--head", *a.Predecessor, "--format", "openai"}
		if raw[a.ID] {
			args = append(args, "--raw")
		}
		out, errOut, code := ctxfold(t, args...)
		if code != 0 {
			t.Fatalf("render --head %s: exit %d: %s", *a.Predecessor, code, errOut)
		}
		var got []map[string]any
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("render: %v\n%s", err, out)
		}
		got, want := normalize(got), normalize(req.Body.Messages)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("request %d: render --head %s differs\nrender:\n%s\nrequest:\n%s", req.Seq, *a.Predecessor, pretty(got), pretty(want))
		}
	}
	if summaries > 0 {
		checkCompaction(t, sess)
	}
}

// checkCompaction: graph and audit see the client's compaction as the
// session's active summary.
func checkCompaction(t *testing.T, sess string) {
	t.Helper()
	out, errOut, code := ctxfold(t, "graph", "--json", sess)
	var g struct {
		ActiveSummaryID string `json:"active_summary_id"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &g) != nil || g.ActiveSummaryID == "" {
		t.Errorf("graph --json: exit %d, no active summary: %s", code, errOut)
	}
	out, errOut, code = ctxfold(t, "audit", "--json", sess)
	var a struct {
		Summaries []struct {
			CoveredNodes int `json:"covered_nodes"`
		} `json:"summaries"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &a) != nil || len(a.Summaries) != 1 || a.Summaries[0].CoveredNodes == 0 {
		t.Errorf("audit --json: exit %d, summaries %+v: %s", code, a.Summaries, errOut)
	}
}
