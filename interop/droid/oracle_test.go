// Package droid_test holds the Factory Droid oracle tests
// (docs/INTEROP-droid.md): every scenario that interop/droid/record.sh
// recorded with the real client against the fake provider is imported,
// verified and rendered, and each render is compared with the request
// Droid actually sent.
package droid_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/fake/openai"
	"github.com/ctxfold/ctxfold/internal/interoptest"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// The shared in-process runner and JSON difference (internal/interoptest).
var (
	ctxfold = interoptest.Ctxfold
	must    = interoptest.Must
)

// Version is the pinned client: record.sh installs it, and its fixtures are
// the default the live test compares with.
const Version = "0.215.0"

// Versions are the client versions whose recordings are committed (the
// pinned one is also the newest published, docs/INTEROP-droid.md).
var Versions = []string{Version}

// notSent lists the record types the importer may skip, each with why the
// model never reads it. A skipped type missing here fails the test.
var notSent = map[string]string{
	"agent_turn_outcome": "turn bookkeeping",
	"todo_state":         "UI state; the TodoWrite calls are messages",
}

func fixturesOf(v string) string {
	return filepath.Join("..", "..", "testdata", "interop", "droid", v)
}

type scenario struct {
	name     string
	session  string
	requests []request
}

// request is one line of requests.jsonl (interop/droid/normalize).
type request struct {
	Seq      int    `json:"seq"`
	Purpose  string `json:"purpose"`
	Messages []any  `json:"messages"`
	Tools    []string
}

func scenarios(t *testing.T, root string) []scenario {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(root, "*"))
	var out []scenario
	for _, d := range dirs {
		s := scenario{name: filepath.Base(d), session: newestSession(t, d)}
		data, err := os.ReadFile(filepath.Join(d, "requests.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var r request
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("%s/requests.jsonl: %v", d, err)
			}
			s.requests = append(s.requests, r)
		}
		if len(s.requests) == 0 {
			t.Fatalf("%s: no requests", d)
		}
		out = append(out, s)
	}
	if len(out) < 4 {
		t.Fatalf("%d scenarios under %s, want at least 4", len(out), root)
	}
	return out
}

// importFile imports a session file (format auto-detected), checks the
// report and verify --strict, and returns the session directory.
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
	if rep.Format != "droid" || len(rep.Warnings) != 0 {
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

func nodes(t *testing.T, dir string) []transcript.Node {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, store.NodesFile))
	if err != nil {
		t.Fatal(err)
	}
	all, err := transcript.ReadNodes(bytes.NewReader(data), store.NodesFile, 0)
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// TestOracle: every scenario imports with verify --strict clean and nothing
// the model reads skipped, and for every captured request k, render --head
// (the node before the assistant node that answers it) --format openai
// equals the request's messages after the written-down normalisation.
func TestOracle(t *testing.T) {
	for _, v := range Versions {
		for _, s := range scenarios(t, fixturesOf(v)) {
			t.Run(v+"/"+s.name, func(t *testing.T) { checkRenders(t, s) })
		}
	}
}

func checkRenders(t *testing.T, s scenario) {
	dir := importFile(t, s.session)
	var answers []transcript.Node
	for _, n := range nodes(t, dir) {
		if n.Role == transcript.RoleAssistant {
			answers = append(answers, n)
		}
	}
	k := 0
	for _, req := range s.requests {
		if isTitleRequest(req) {
			// Droid's title for a session it loads with none (the manual
			// compaction's new session): no turn of the conversation.
			continue
		}
		if isCompactionRequest(req) {
			// Droid's summary request: answered by the compaction_state,
			// not by a message (checked by TestCompaction).
			continue
		}
		if k >= len(answers) {
			t.Fatalf("request %d: no assistant node left to answer it", req.Seq)
		}
		answer := answers[k]
		k++
		at := sessionAt(t, s.session, answer.ID, dir)
		out := must(t, "render", at, "--head", answer.Predecessor, "--format", "openai")
		var got []any
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("render --format openai: %v", err)
		}
		compacted := hasSummary(req.Messages)
		got, want := normalize(got, compacted), normalize(req.Messages, compacted)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("request %d (head %s):\n%s", req.Seq, answer.Predecessor, firstDiff(got, want))
		}
	}
	if k != len(answers) {
		t.Errorf("%d assistant node(s) answer no recorded request", len(answers)-k)
	}
}

// sessionAt is where a request answered by node answer renders from: the
// whole session, unless a compaction was written after the answer. A
// summary substitutes on every path through the turns it covers
// (docs/FORMAT.md §4), so a request Droid sent before its compaction is
// rendered from the file as it was then: cut before that compaction_state,
// imported anew.
func sessionAt(t *testing.T, file, answer, whole string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	seen := false
	for i, l := range lines {
		if bytes.Contains(l, []byte(`"id":"`+answer+`"`)) {
			seen = true
		}
		if seen && bytes.HasPrefix(l, []byte(`{"type":"compaction_state"`)) {
			cut := filepath.Join(t.TempDir(), filepath.Base(file))
			if err := os.WriteFile(cut, bytes.Join(lines[:i], nil), 0o644); err != nil {
				t.Fatal(err)
			}
			return importFile(t, cut)
		}
	}
	return whole
}

// newestSession is a scenario's session: its only file, or, after a
// manual compaction, the one no other file names as its parent (the
// importer follows the chain from it).
func newestSession(t *testing.T, dir string) string {
	t.Helper()
	sessions, _ := filepath.Glob(filepath.Join(dir, "*-*-*-*-*.jsonl"))
	parents := map[string]bool{}
	for _, f := range sessions {
		data, _ := os.ReadFile(f)
		line, _, _ := bytes.Cut(data, []byte("\n"))
		var start struct {
			Parent string `json:"parent"`
		}
		if json.Unmarshal(line, &start) == nil && start.Parent != "" {
			parents[filepath.Join(dir, start.Parent+".jsonl")] = true
		}
	}
	var out []string
	for _, f := range sessions {
		if !parents[f] {
			out = append(out, f)
		}
	}
	if len(out) != 1 {
		t.Fatalf("%s: %d session files no other names as parent, want 1", dir, len(out))
	}
	return out[0]
}

// isTitleRequest: Droid's request for a session's title (normalize
// marks it), sent when it loads a session that has none.
func isTitleRequest(r request) bool { return r.Purpose == "title" }

func isCompactionRequest(r request) bool {
	b, _ := json.Marshal(r.Messages)
	return bytes.Contains(b, []byte(jsonText(openai.DroidCompactionCue)))
}

// jsonText is s as it appears inside a JSON string.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

const summaryOpen = "A previous instance of Droid has summarized the conversation thus far as follows:"

func hasSummary(msgs []any) bool {
	b, _ := json.Marshal(msgs)
	return bytes.Contains(b, []byte(summaryOpen))
}

// standing are the starts of the reminder blocks Droid re-sends from its
// live state after a compaction, in its summary message (the tool list,
// the skills, the sub-agents): the session records them in the context
// messages it wrote before, not where it sends them then
// (docs/INTEROP-droid.md, known differences).
var standing = []string{
	"<system-reminder>\nThe tools listed below are available",
	"<system-reminder>\nAvailable skills",
	"<system-reminder>\nAvailable subagents",
}

// normalize applies the written-down normalisation (docs/INTEROP-droid.md)
// to Chat Completions messages: a content of text parts is its texts
// joined by "\n" (render's form of a node with several text blocks), the
// summary prefix of a summary node is dropped, and, in a request after a
// compaction, the standing reminders are dropped.
func normalize(msgs []any, compacted bool) []any {
	out := make([]any, 0, len(msgs))
	for _, m := range msgs {
		mm, ok := m.(map[string]any)
		if !ok {
			out = append(out, m)
			continue
		}
		c := map[string]any{}
		for k, v := range mm {
			c[k] = v
		}
		texts, isText := textsOf(c["content"])
		if isText && c["role"] == "user" {
			var kept []string
			for _, s := range texts {
				s = strings.TrimPrefix(s, transcript.SummaryPrefix)
				if compacted && isStanding(s) {
					continue
				}
				kept = append(kept, s)
			}
			if len(kept) == 0 {
				continue
			}
			c["content"] = strings.Join(kept, "\n")
		} else if isText {
			c["content"] = strings.Join(texts, "\n")
		}
		out = append(out, c)
	}
	return out
}

// textsOf splits a content into its texts: a string is one; a list only
// of text parts is those, each split again at a standing reminder (render
// joins a node's blocks into one string).
func textsOf(content any) ([]string, bool) {
	var texts []string
	switch c := content.(type) {
	case string:
		texts = []string{c}
	case []any:
		for _, p := range c {
			pm, _ := p.(map[string]any)
			s, ok := pm["text"].(string)
			if pm["type"] != "text" || !ok {
				return nil, false
			}
			texts = append(texts, s)
		}
	default:
		return nil, false
	}
	var out []string
	for _, s := range texts {
		out = append(out, splitStanding(s)...)
	}
	return out, true
}

// splitStanding cuts s before each system reminder after a newline, so a
// standing one can be dropped from a node whose blocks render joined.
func splitStanding(s string) []string {
	var out []string
	for {
		i := strings.Index(s, "\n<system-reminder>")
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i])
		s = s[i+1:]
	}
}

func isStanding(s string) bool {
	for _, r := range standing {
		if strings.HasPrefix(s, r) {
			return true
		}
	}
	return false
}

func firstDiff(got, want []any) string {
	for i := 0; i < max(len(got), len(want)); i++ {
		var g, w any
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if !reflect.DeepEqual(g, w) {
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(w)
			j := 0
			for j < len(gb) && j < len(wb) && gb[j] == wb[j] {
				j++
			}
			from := max(0, j-100)
			return fmt.Sprintf("message %d of %d/%d differs at byte %d\nrender: …%s…\nsent:   …%s…", i, len(got), len(want), j,
				gb[from:min(len(gb), j+150)], wb[from:min(len(wb), j+150)])
		}
	}
	return "equal"
}

// TestCompaction: each recorded compaction is a summary node; the last
// covers the removedCount messages of its compaction_state, reads as the
// message Droid sent in their place, and Droid's summary request was
// captured.
func TestCompaction(t *testing.T) {
	for _, name := range []string{"compaction", "compaction-twice", "compaction-manual"} {
		t.Run(name, func(t *testing.T) { checkCompaction(t, scenarioNamed(t, name)) })
	}
}

func checkCompaction(t *testing.T, s scenario) {
	var state struct {
		RemovedCount int    `json:"removedCount"`
		SummaryText  string `json:"summaryText"`
	}
	states := 0
	data, _ := os.ReadFile(s.session)
	for _, l := range bytes.Split(data, []byte("\n")) {
		if bytes.HasPrefix(l, []byte(`{"type":"compaction_state"`)) {
			json.Unmarshal(l, &state)
			states++
		}
	}
	var summaries []transcript.Node
	for _, n := range nodes(t, importFile(t, s.session)) {
		if n.IsSummary() {
			summaries = append(summaries, n)
		}
	}
	if len(summaries) != states || states == 0 || state.SummaryText == "" {
		t.Fatalf("%d summary nodes for %d compaction_state records (summary text %q)", len(summaries), states, state.SummaryText)
	}
	last := summaries[len(summaries)-1]
	if got := last.CoverCount(); got != state.RemovedCount {
		t.Errorf("summary covers %d nodes, compaction_state removed %d", got, state.RemovedCount)
	}
	text := last.Content.PlainText()
	if !strings.Contains(text, summaryOpen+"\n\n<summary>\n"+state.SummaryText+"\n</summary>") {
		t.Errorf("summary node text %q does not frame the recorded summary as Droid sends it", text)
	}
	asked := 0
	for _, r := range s.requests {
		if isCompactionRequest(r) {
			asked++
		}
	}
	if asked != states {
		t.Errorf("%d summary requests captured for %d compactions", asked, states)
	}
}

func scenarioNamed(t *testing.T, name string) scenario {
	t.Helper()
	for _, s := range scenarios(t, fixturesOf(Version)) {
		if s.name == name {
			return s
		}
	}
	t.Fatalf("no scenario %q", name)
	return scenario{}
}
