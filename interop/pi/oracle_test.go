// Package pi_test holds the pi oracle tests (docs/INTEROP-pi.md): every
// scenario interop/pi/record.sh recorded with the real client against the
// fake provider is imported, verified and rendered, and each render is
// compared with the request pi actually sent.
package pi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/interoptest"
	"github.com/ctxfold/ctxfold/transcript"
)

// The shared in-process runner and JSON difference (internal/interoptest).
var (
	ctxfold = interoptest.Ctxfold
	must    = interoptest.Must
	diff    = interoptest.Diff
)

// Version is the pinned client: record.sh installs it, and its fixtures
// are the default the live test compares with.
const Version = "0.73.1"

// Versions are the client versions whose recordings are committed.
var Versions = []string{Version}

func fixturesOf(v string) string {
	return filepath.Join("..", "..", "testdata", "interop", "pi", v)
}

// notSent lists the entry types the importer may skip, each with why the
// model never reads it. A skipped type missing here fails the test.
var notSent = map[string]string{
	"thinking_level_change": "a setting: pi sends no message for it",
}

// summarizerPrompt opens the system prompt of pi's compaction requests
// (SUMMARIZATION_SYSTEM_PROMPT); those requests have no assistant entry in
// the session: their answer is the compaction entry's summary.
const summarizerPrompt = "You are a context summarization assistant."

type scenario struct {
	name    string
	session string
	// requests by the fake's sequence number.
	requests map[int]map[string]any
}

func scenarios(t *testing.T, root string) []scenario {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(root, "*"))
	var out []scenario
	for _, d := range dirs {
		s := scenario{name: filepath.Base(d), session: filepath.Join(d, "session.jsonl"), requests: map[int]map[string]any{}}
		files, _ := filepath.Glob(filepath.Join(d, "requests", "request-*.json"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var req map[string]any
			if err := json.Unmarshal(data, &req); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			seq, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "request-"), ".json"))
			s.requests[seq] = req
		}
		if _, err := os.Stat(s.session); err != nil || len(s.requests) == 0 {
			t.Fatalf("%s: no session.jsonl or no requests", d)
		}
		out = append(out, s)
	}
	if len(out) < 4 {
		t.Fatalf("%d scenarios under %s, want at least 4", len(out), root)
	}
	return out
}

// importFile imports a session file (format auto-detected), checks the
// report (pi, no warnings, nothing the model reads skipped) and verify
// --strict, and returns the session directory.
func importFile(t *testing.T, file string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "s")
	out := must(t, "import", file, "-o", dir, "--json")
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
	if rep.Format != "pi" || len(rep.Warnings) != 0 {
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

// lines is the session file's lines and, for each assistant entry, the
// line it is on and the fake's sequence number of the request that
// produced it (its responseId, chatcmpl-fake-NNN).
func lines(t *testing.T, file string) (all [][]byte, answers map[int]int) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	answers = map[int]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := append([]byte(nil), sc.Bytes()...)
		var e struct {
			Message struct {
				Role       string `json:"role"`
				ResponseID string `json:"responseId"`
			} `json:"message"`
		}
		_ = json.Unmarshal(line, &e)
		if e.Message.Role == "assistant" {
			// chatcmpl-fake-NNN (fake OpenAI), msg_fake_reqNNNN (fake Anthropic).
			seq, err := strconv.Atoi(strings.TrimLeft(e.Message.ResponseID, "abcdefghijklmnopqrstuvwxyz_-"))
			if err != nil {
				t.Fatalf("%s: assistant entry with responseId %q", file, e.Message.ResponseID)
			}
			answers[seq] = len(all)
		}
		all = append(all, line)
	}
	return all, answers
}

// normalize applies docs/INTEROP-pi.md's normalisation to Chat Completions
// and Anthropic messages: the system message pi does not record is
// dropped; content that is a list of text parts and content that is a
// string both become the list of their texts; "content": null beside tool
// calls is dropped; the summary node's "[Previous conversation summary]\n"
// is removed; Anthropic blocks lose cache_control and a false is_error.
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
		switch v := c["content"].(type) {
		case nil:
			delete(c, "content")
		case string:
			c["content"] = []any{strings.TrimPrefix(v, transcript.SummaryPrefix)}
		case []any:
			var texts []any
			for _, p := range v {
				pm, _ := p.(map[string]any)
				if pm["type"] != "text" {
					texts = append(texts, withoutMarkers(pm))
					continue
				}
				texts = append(texts, strings.TrimPrefix(pm["text"].(string), transcript.SummaryPrefix))
			}
			c["content"] = texts
		}
		out = append(out, c)
	}
	return out
}

// withoutMarkers drops from an Anthropic block what pi adds for the
// provider and ctxfold leaves out: cache_control markers and a false
// is_error.
func withoutMarkers(b map[string]any) map[string]any {
	c := map[string]any{}
	for k, v := range b {
		if k == "cache_control" || k == "is_error" && v == false {
			continue
		}
		c[k] = v
	}
	return c
}

func isCompaction(req map[string]any) bool {
	if sys, ok := req["system"].([]any); ok && len(sys) > 0 { // Anthropic Messages
		b, _ := sys[0].(map[string]any)
		text, _ := b["text"].(string)
		return strings.HasPrefix(text, summarizerPrompt)
	}
	msgs, _ := req["messages"].([]any)
	if len(msgs) == 0 {
		return false
	}
	first, _ := msgs[0].(map[string]any)
	text, _ := first["content"].(string)
	return first["role"] == "system" && strings.HasPrefix(text, summarizerPrompt)
}

// TestOracle imports every scenario whole (verify --strict clean, nothing
// the model reads skipped), then checks every captured request: the
// session file as it was when pi sent it (its lines before the assistant
// entry that answered it) imports with HEAD at pi's leaf, and render
// --format openai equals the request's messages, after pi's compactions
// too. Each compaction request is one pi made for a compaction entry.
func TestOracle(t *testing.T) {
	for _, v := range Versions {
		for _, s := range scenarios(t, fixturesOf(v)) {
			t.Run(v+"/"+s.name, func(t *testing.T) { checkRenders(t, s) })
		}
	}
}

func checkRenders(t *testing.T, s scenario) {
	t.Helper()
	importFile(t, s.session)
	all, answers := lines(t, s.session)
	var seqs []int
	for seq := range s.requests {
		seqs = append(seqs, seq)
	}
	sort.Ints(seqs)
	compactions := bytes.Count(bytes.Join(all, []byte("\n")), []byte(`{"type":"compaction"`))
	var asked int
	for _, seq := range seqs {
		req := s.requests[seq]
		at, ok := answers[seq]
		if !ok {
			if !isCompaction(req) {
				t.Errorf("request %d has no assistant entry and is no compaction", seq)
			}
			asked++
			continue
		}
		prefix := filepath.Join(t.TempDir(), "prefix.jsonl")
		if err := os.WriteFile(prefix, append(bytes.Join(all[:at], []byte("\n")), '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		dir := importFile(t, prefix)
		got := render(t, dir, req)
		sent, _ := req["messages"].([]any)
		g, w := normalize(got), normalize(sent)
		if _, chat := req["stream_options"]; !chat {
			g, w = mergeUsers(g), mergeUsers(w)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("request %d: render differs from what pi sent, %s", seq, diff(g, w))
		}
	}
	if compactions > 0 && asked < compactions {
		t.Errorf("%d compaction entries but %d compaction requests", compactions, asked)
	}
}

// render is the session's view in the wire format of req: Anthropic
// Messages when the request has max_tokens and no stream_options (pi's
// anthropic-messages API), else Chat Completions.
func render(t *testing.T, dir string, req map[string]any) []any {
	t.Helper()
	_, chat := req["stream_options"]
	if !chat {
		var body struct {
			Messages []any `json:"messages"`
		}
		if err := json.Unmarshal([]byte(must(t, "render", dir, "--format", "anthropic")), &body); err != nil {
			t.Fatal(err)
		}
		return body.Messages
	}
	var got []any
	if err := json.Unmarshal([]byte(must(t, "render", dir, "--format", "openai")), &got); err != nil {
		t.Fatal(err)
	}
	return got
}

// mergeUsers joins consecutive user messages into one, as the Anthropic
// API reads them: pi sends its summary and the next user turn as two user
// messages, ctxfold's render merges a summary with the user turn after it
// (docs/FORMAT.md §4).
func mergeUsers(msgs []any) []any {
	var out []any
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		if n := len(out); n > 0 && mm["role"] == "user" {
			if prev, _ := out[n-1].(map[string]any); prev["role"] == "user" {
				a, _ := prev["content"].([]any)
				b, _ := mm["content"].([]any)
				out[n-1] = map[string]any{"role": "user", "content": append(append([]any(nil), a...), b...)}
				continue
			}
		}
		out = append(out, m)
	}
	return out
}
