// Package codex_test holds the Codex CLI oracle tests (docs/INTEROP-codex.md):
// every scenario that interop/codex/record.sh recorded with the real client
// against the fake provider is imported, verified, rendered and estimated,
// and each render is compared with the request Codex actually sent.
package codex_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/cmd"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/internal/interoptest"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// Version is the pinned client: record.sh installs it, and its fixtures
// are the default the live test compares with.
const Version = "0.169.0"

// Versions are the client versions whose recordings are committed; the
// oracle runs on each (the pinned one and the newest, docs/INTEROP-codex.md).
var Versions = []string{Version, "0.171.0"}

// fixturesOf is the committed recordings of client version v.
func fixturesOf(v string) string {
	return filepath.Join("..", "..", "testdata", "interop", "codex", v)
}

// allScenarios is every committed scenario of every version, named
// "<version>/<scenario>".
func allScenarios(t *testing.T) []scenario {
	t.Helper()
	var out []scenario
	for _, v := range Versions {
		for _, s := range scenarios(t, fixturesOf(v)) {
			s.name = v + "/" + s.name
			out = append(out, s)
		}
	}
	return out
}

// notSent lists the record types the importer may skip, each with why the
// model never reads it. A skipped type missing here fails the test: decide
// whether it reaches the model before adding it.
var notSent = map[string]string{
	"event_msg/item_completed":          "UI event mirroring an item",
	"event_msg/task_started":            "turn bookkeeping",
	"event_msg/task_complete":           "turn bookkeeping",
	"event_msg/thread_settings_applied": "settings event",
	"event_msg/token_count":             "usage event (token_usage_record carries the usage)",
	"event_msg/user_message":            "mirror of a response item",
	"event_msg/agent_message":           "mirror of a response item",
	"event_msg/agent_reasoning":         "mirror of a response item",
	"event_msg/context_compacted":       "mirror of the compacted record",
	"turn_context":                      "settings; what reaches the model is recorded as messages",
	"world_state":                       "state the context messages are built from; the messages are recorded",
	"token_usage_record":                "usage bookkeeping",
}

// compactionCue is in the prompt Codex appends to its compaction request;
// that prompt is Codex's own and is not recorded in the rollout.
const compactionCue = "CONTEXT CHECKPOINT"

type scenario struct {
	name     string
	rollouts []string
	requests []map[string]any
}

func scenarios(t *testing.T, root string) []scenario {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(root, "*"))
	var out []scenario
	for _, d := range dirs {
		rollouts, _ := filepath.Glob(filepath.Join(d, "*.jsonl"))
		files, _ := filepath.Glob(filepath.Join(d, "requests", "request-*.json"))
		sort.Strings(files)
		s := scenario{name: filepath.Base(d), rollouts: rollouts}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var req map[string]any
			if err := json.Unmarshal(data, &req); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			s.requests = append(s.requests, req)
		}
		if len(rollouts) == 0 || len(s.requests) == 0 {
			t.Fatalf("%s: no rollout or no requests", d)
		}
		out = append(out, s)
	}
	if len(out) < 5 {
		t.Fatalf("%d scenarios under %s, want at least 5", len(out), root)
	}
	return out
}

type result struct {
	stdout, stderr string
	code           int
}

func ctxfold(t *testing.T, args ...string) result {
	t.Helper()
	ios, _, out, errOut := report.Test()
	env := map[string]string{"XDG_CONFIG_HOME": t.TempDir()}
	f := &cmd.Factory{IO: ios, Now: func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) },
		Getenv: func(k string) string { return env[k] }}
	code := cmd.Run(context.Background(), f, args)
	return result{out.String(), errOut.String(), code}
}

func must(t *testing.T, args ...string) string {
	t.Helper()
	r := ctxfold(t, args...)
	if r.code != 0 {
		t.Fatalf("ctxfold %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r.stdout
}

// importScenario imports (format auto-detected), checks the report and
// verify --strict, and returns the session directory.
func importScenario(t *testing.T, s scenario) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), s.name)
	out := must(t, append(append([]string{"import"}, s.rollouts...), "-o", dir, "--json")...)
	var rep struct {
		Format  string `json:"format"`
		Records []struct {
			Record  string `json:"record"`
			Skipped int    `json:"skipped"`
			Reasons []struct {
				Reason string `json:"reason"`
			} `json:"reasons"`
		} `json:"records"`
		Warnings []json.RawMessage `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("import --json: %v\n%s", err, out)
	}
	if rep.Format != "codex" || len(rep.Warnings) != 0 {
		t.Errorf("import: format %q, warnings %s", rep.Format, rep.Warnings)
	}
	for _, r := range rep.Records {
		if r.Skipped > 0 && notSent[r.Record] == "" {
			t.Errorf("import skipped %d %q record(s) (%v): does it reach the model?", r.Skipped, r.Record, r.Reasons)
		}
	}
	must(t, "verify", "--strict", dir)
	return dir
}

// spine returns the raw predecessor spine from HEAD.
func spine(t *testing.T, dir string) []transcript.Node {
	t.Helper()
	out := must(t, "render", dir, "--raw", "--format", "jsonl")
	nodes, err := transcript.ReadNodes(strings.NewReader(out), "render.jsonl", 0)
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}

// normalize applies the written-down normalisation (docs/INTEROP-codex.md)
// to input items: drop item "id" and "status" (Codex's bookkeeping of
// items it has already sent; ctxfold does not keep item ids) and empty
// "annotations" of output_text parts.
func normalize(items []any) []any {
	out := make([]any, len(items))
	for i, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			out[i] = it
			continue
		}
		c := map[string]any{}
		for k, v := range m {
			if k != "id" && k != "status" {
				c[k] = v
			}
		}
		if parts, ok := c["content"].([]any); ok {
			np := make([]any, len(parts))
			for j, p := range parts {
				pm, ok := p.(map[string]any)
				if a, isList := pm["annotations"].([]any); ok && isList && len(a) == 0 {
					q := map[string]any{}
					for k, v := range pm {
						if k != "annotations" {
							q[k] = v
						}
					}
					p = q
				}
				np[j] = p
			}
			c["content"] = np
		}
		out[i] = c
	}
	return out
}

// planLine and planSections are the parts of the base instructions Codex
// leaves out when it offers no update_plan tool (codex exec does not): a
// line of gpt-5.5's prompt, two sections of the fallback prompt. The
// rollout records the instructions before that edit (docs/INTEROP-codex.md,
// known differences).
const planLine = "- If you create a checklist or task list, you update item statuses incrementally as each item is completed rather than marking every item done only at the end.\n"

var planSections = []string{"\n## Planning\n", "\n## `update_plan`\n"}

// withoutPlan is text without planLine and planSections (each from its
// heading to the next "## " heading or the end).
func withoutPlan(text string) string {
	text = strings.Replace(text, planLine, "", 1)
	for _, h := range planSections {
		i := strings.Index(text, h)
		if i < 0 {
			continue
		}
		i++ // keep the newline before the heading
		end := len(text)
		if j := strings.Index(text[i+len(h)-1:], "\n## "); j >= 0 {
			end = i + len(h) - 1 + j + 1
		}
		text = text[:i] + text[end:]
	}
	return text
}

func offersTool(req map[string]any, name string) bool {
	tools, _ := req["tools"].([]any)
	for _, t := range tools {
		if m, _ := t.(map[string]any); m["name"] == name {
			return true
		}
	}
	return false
}

// dropPlanLine removes the plan parts from a rendered developer message.
func dropPlanLine(item any) any {
	m, _ := item.(map[string]any)
	parts, _ := m["content"].([]any)
	if m["role"] != "developer" || len(parts) != 1 {
		return item
	}
	p, _ := parts[0].(map[string]any)
	text, _ := p["text"].(string)
	return map[string]any{"type": m["type"], "role": m["role"],
		"content": []any{map[string]any{"type": p["type"], "text": withoutPlan(text)}}}
}

func isCompactionPrompt(item any) bool {
	m, _ := item.(map[string]any)
	if m["role"] != "user" {
		return false
	}
	b, _ := json.Marshal(m["content"])
	return bytes.Contains(b, []byte(compactionCue))
}

// diff shows the JSON of rendered and sent items around their first difference.
// diff is the shared JSON difference (internal/interoptest).
var diff = interoptest.Diff

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// TestOracle runs oracle tests 1 and 2 on every scenario: import and
// verify --strict succeed with nothing the model reads skipped, and for
// every captured request k, render --head (the node before the k-th
// assistant node) --format responses equals the request's input.
func TestOracle(t *testing.T) {
	for _, s := range allScenarios(t) {
		t.Run(s.name, func(t *testing.T) { checkRenders(t, s) })
	}
}

func checkRenders(t *testing.T, s scenario) {
	t.Helper()
	toolsNotRecorded(t, s)
	dir := importScenario(t, s)
	// Each request's answer: the next assistant node of its thread (the
	// request's client_metadata.thread_id, else its prompt_cache_key, is
	// the thread id; node ids start with "cx" and the thread id's last 8
	// hex digits, format/codex).
	data, err := os.ReadFile(filepath.Join(dir, store.NodesFile))
	if err != nil {
		t.Fatal(err)
	}
	all, err := transcript.ReadNodes(bytes.NewReader(data), store.NodesFile, 0)
	if err != nil {
		t.Fatal(err)
	}
	byThread := map[string][]transcript.Node{}
	for _, n := range all {
		if n.Role == transcript.RoleAssistant {
			prefix, _, _ := strings.Cut(n.ID, "-")
			byThread[prefix] = append(byThread[prefix], n)
		}
	}
	answers := make([]transcript.Node, len(s.requests))
	for k, req := range s.requests {
		key, _ := req["prompt_cache_key"].(string)
		if meta, ok := req["client_metadata"].(map[string]any); ok && meta["thread_id"] != nil {
			key, _ = meta["thread_id"].(string)
		}
		hex := strings.ReplaceAll(key, "-", "")
		if len(hex) != 32 {
			t.Fatalf("request %d: %q is not a thread id", k+1, key)
		}
		prefix := "cx" + hex[24:]
		if len(byThread[prefix]) == 0 {
			t.Fatalf("request %d (thread %s): no assistant node left in %s", k+1, key, prefix)
		}
		answers[k], byThread[prefix] = byThread[prefix][0], byThread[prefix][1:]
	}
	for p, rest := range byThread {
		if len(rest) > 0 {
			t.Errorf("%d assistant node(s) of %s answer no recorded request", len(rest), p)
		}
	}
	for k, req := range s.requests {
		if instr, _ := req["instructions"].(string); instr != "" {
			t.Errorf("request %d: instructions %q; Codex %s sent them as the first developer message", k+1, short(instr), Version)
		}
		input, _ := req["input"].([]any)
		if len(input) > 0 && isCompactionPrompt(input[len(input)-1]) {
			// The compaction request: the view, then Codex's own prompt.
			input = input[:len(input)-1]
		}
		var got []any
		at := dir
		if cut := cutBeforeLaterSummary(t, s, all, answers[k].ID); cut != "" {
			at = cut
		}
		out := must(t, "render", at, "--head", answers[k].Predecessor, "--format", "responses")
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("render --format responses: %v", err)
		}
		if !offersTool(req, "update_plan") && len(got) > 0 {
			got[0] = dropPlanLine(got[0])
		}
		want := normalize(input)
		got = normalize(got)
		if reflect.DeepEqual(got, want) {
			continue
		}
		for i := 0; i < max(len(got), len(want)); i++ {
			var g, w any
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("request %d (head %s): item %d of %d/%d differs:\n%s", k+1, answers[k].Predecessor, i, len(got), len(want), diff(g, w))
				break
			}
		}
	}
}

// cutBeforeLaterSummary: a session compacted more than once substitutes
// only its latest summary (docs/FORMAT.md §4), so a request answered while
// an earlier summary was in force is rendered from the rollout as it was
// then: cut before the answer's record, imported anew (the session
// directory, "" when the whole session's view is that request's).
func cutBeforeLaterSummary(t *testing.T, s scenario, all []transcript.Node, answer string) string {
	t.Helper()
	// A node id ends with the line of its record (format/codex).
	line := func(id string) int {
		n, err := strconv.Atoi(id[strings.LastIndex(id, "-")+1:])
		if err != nil {
			t.Fatalf("node id %q: no line number", id)
		}
		return n
	}
	before, after := false, false
	for _, n := range all {
		if n.Role != transcript.SummaryRole || !strings.HasPrefix(n.ID, transcript.SummaryIDPrefix) {
			continue
		}
		if line(n.ID) < line(answer) {
			before = true
		} else {
			after = true
		}
	}
	if !before || !after {
		return ""
	}
	if len(s.rollouts) != 1 {
		t.Fatalf("%s: a request between two compactions of several rollouts", s.name)
	}
	data, err := os.ReadFile(s.rollouts[0])
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	kept := bytes.Join(lines[:line(answer)-1], nil)
	file := filepath.Join(t.TempDir(), filepath.Base(s.rollouts[0]))
	if err := os.WriteFile(file, kept, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "cut")
	must(t, "import", file, "-o", dir)
	return dir
}

// toolsNotRecorded checks the known difference that Codex 0.169's rollouts
// hold no tool definitions (docs/INTEROP-codex.md): if a rollout starts to
// record them, the importer should import them and this test says so.
func toolsNotRecorded(t *testing.T, s scenario) {
	t.Helper()
	var rollouts [][]byte
	for _, f := range s.rollouts {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rollouts = append(rollouts, b)
	}
	tools, _ := s.requests[0]["tools"].([]any)
	for _, tl := range tools {
		m, _ := tl.(map[string]any)
		desc, _ := m["description"].(string)
		if len(desc) < 40 {
			continue
		}
		var buf bytes.Buffer
		e := json.NewEncoder(&buf)
		e.SetEscapeHTML(false) // Codex writes "<" as is
		_ = e.Encode(desc)
		enc := bytes.TrimSpace(buf.Bytes())
		for i, b := range rollouts {
			if bytes.Contains(b, enc[1:len(enc)-1]) {
				t.Errorf("%s records the definition of tool %v: import it", filepath.Base(s.rollouts[i]), m["name"])
			}
		}
	}
}

// TestCompactionSummary is oracle test 3: Codex's own compaction imports
// as a summary covering everything but the base instructions, and the
// requests after it render through the summary (TestOracle compares them).
func TestCompactionSummary(t *testing.T) {
	for _, v := range Versions {
		t.Run(v, func(t *testing.T) { compactionSummary(t, v) })
	}
}

func compactionSummary(t *testing.T, v string) {
	var s scenario
	for _, sc := range scenarios(t, fixturesOf(v)) {
		if sc.name == "compaction" {
			s = sc
		}
	}
	if s.name == "" {
		t.Fatal("no compaction scenario")
	}
	var prompts int
	for _, req := range s.requests {
		input, _ := req["input"].([]any)
		if len(input) > 0 && isCompactionPrompt(input[len(input)-1]) {
			prompts++
		}
	}
	if prompts != 1 {
		t.Fatalf("%d compaction requests recorded, want 1", prompts)
	}
	dir := importScenario(t, s)
	nodes := spine(t, dir)
	ids := strings.Fields(must(t, "render", dir, "--format", "ids"))
	if len(ids) < 3 || !strings.HasPrefix(ids[1], transcript.SummaryIDPrefix) || ids[0] != nodes[0].ID {
		t.Fatalf("view %v: want the base instructions, then the summary", ids)
	}
	jsonl := must(t, "render", dir, "--format", "jsonl")
	all, err := transcript.ReadNodes(strings.NewReader(jsonl), "view.jsonl", 0)
	if err != nil {
		t.Fatal(err)
	}
	summary := all[1]
	covers := summary.CoversIDs()
	if sp, ok := summary.CoversSpan(); ok {
		covers = []string{sp.First} // the stored span (docs/FORMAT.md §4) starts there
	}
	if summary.Predecessor != nodes[0].ID || len(covers) == 0 || covers[0] != nodes[1].ID {
		t.Errorf("summary predecessor %q covers %v; want after %s, from %s", summary.Predecessor, covers, nodes[0].ID, nodes[1].ID)
	}
	if _, ok := summary.Metadata[transcript.MetaResponsesInput]; !ok {
		t.Error("summary without responses_input")
	}
	// Every request after the compaction reads the summary: in the view of
	// the last request and of the one right after the compaction.
	text := summary.Content.PlainText()
	if !strings.Contains(text, "Another language model started to solve this problem") {
		t.Errorf("summary text %q", short(text))
	}
}

// TestEstimate is oracle test 4: estimate runs without flags on every
// imported scenario, budgets against the window the transcript records
// (usage.context_window, which beats the model table) and counts the
// recorded base instructions as system.
func TestEstimate(t *testing.T) {
	for _, s := range allScenarios(t) {
		t.Run(s.name, func(t *testing.T) {
			dir := importScenario(t, s)
			nodes := spine(t, dir)
			var window int64
			for _, n := range nodes {
				if n.Usage != nil && n.Usage.ContextWindow() > 0 {
					window = n.Usage.ContextWindow()
				}
			}
			if window == 0 {
				t.Fatal("no recorded context window")
			}
			base := nodes[0]
			if string(base.Metadata["codex_base_instructions"]) != "true" {
				t.Fatalf("first node %s is not the base instructions", base.ID)
			}
			baseTokens, err := estimate.Text("o200k_base", base.Content.PlainText())
			if err != nil {
				t.Fatal(err)
			}
			out := must(t, "estimate", dir, "--json")
			var est struct {
				Window     int64          `json:"window"`
				Categories map[string]int `json:"categories"`
			}
			if err := json.Unmarshal([]byte(out), &est); err != nil {
				t.Fatal(err)
			}
			if est.Window != window || est.Categories["system"] < baseTokens || baseTokens < 1000 {
				t.Errorf("estimate window %d system %d; want window %d, system ≥ %d (the base instructions)", est.Window, est.Categories["system"], window, baseTokens)
			}
		})
	}
}
