package claudecodeinterop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/internal/interoptest"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// The shared in-process runner and JSON difference (internal/interoptest).
var (
	ctxfold = interoptest.Ctxfold
)

// The oracle tests (docs/INTEROP-claude-code.md): Claude Code's own
// transcripts and the requests it really sent, recorded against the fake
// provider, decide whether import + render reproduce what the model read.

func fixtureRoot() string { return fixtureRootOf(Version) }

// fixtureRootOf is the committed recordings of client version v.
func fixtureRootOf(v string) string {
	return filepath.Join("..", "..", "testdata", "interop", "claude-code", v)
}

// forEachVersion runs f on the committed recordings of every version in
// Versions (the pinned client's and the newest).
func forEachVersion(t *testing.T, f func(t *testing.T, root string)) {
	for _, v := range Versions {
		t.Run(v, func(t *testing.T) { f(t, fixtureRootOf(v)) })
	}
}

// ctxfold runs one command in process and returns stdout, stderr and the
// exit code.

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := ctxfold(t, args...)
	if code != 0 {
		t.Fatalf("ctxfold %s: exit %d\n%s", strings.Join(args, " "), code, errOut)
	}
	return out
}

// renderGaps are recorded scenarios whose requests render does not equal
// yet, with why; their own tests read them (TestOracleModelSwitch).
var renderGaps = map[string]string{
	"model-switch": "after /model, Claude Code lays the request out for the new model (the environment as a user " +
		"reminder where Opus 5.5 took a system message, one tool fewer) and sends /model's output, which 2.1.3xx keeps " +
		"in a system record; neither is imported (docs/INTEROP-claude-code.md, \"A model switch\")",
}

// scenarioDirs lists the committed scenarios; a bare checkout has them all.
func scenarioDirs(t *testing.T, root string) []string {
	t.Helper()
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatalf("fixtures: %v", err)
	}
	var out []string
	for _, e := range ents {
		if why, gap := renderGaps[e.Name()]; gap {
			t.Logf("%s: not compared: %s", e.Name(), why)
			continue
		}
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	if len(out) < len(Scenarios()) {
		t.Fatalf("fixtures: %d scenarios under %s, want %d", len(out), root, len(Scenarios()))
	}
	return out
}

// sessionFiles are a scenario's top-level session files (a fork has two);
// sub-agent files lie beside them and are found by the importer.
func sessionFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "transcript", "*.jsonl"))
	if err != nil || len(m) == 0 {
		t.Fatalf("%s: no session file", dir)
	}
	sort.Strings(m)
	return m
}

type importReport struct {
	Records []struct {
		Record   string `json:"record"`
		Imported int    `json:"imported"`
		Skipped  int    `json:"skipped"`
		Reasons  []struct {
			Reason  string `json:"reason"`
			Outcome string `json:"outcome"`
		} `json:"reasons"`
	} `json:"records"`
}

// notSent are the record types the client never puts in a request; any
// other skipped record fails the test, so an importer that drops a record
// reaching the model (an attachment, a system-role message) is caught.
var notSent = map[string]bool{
	"queue-operation": true, "last-prompt": true, "atis-latch": true, "cost-state": true,
	"mode": true, "tools-used": true, "api-request": true, "api-request-blob": true,
	"api-request-shape": true, // later shapes: the first one is imported
	"permission-mode":   true, "ai-title": true, "custom-title": true, "file-history-snapshot": true,
}

type imported struct {
	dir     string
	session string
}

// importAll imports every session file of a scenario, checking the report
// and verify --strict (oracle 1).
func importAll(t *testing.T, root, scen string) []imported {
	t.Helper()
	var out []imported
	for _, f := range sessionFiles(t, filepath.Join(root, scen)) {
		dst := filepath.Join(t.TempDir(), "s")
		js := mustRun(t, "import", f, "-o", dst, "--json")
		var rep importReport
		if err := json.Unmarshal([]byte(js), &rep); err != nil {
			t.Fatalf("import --json: %v\n%s", err, js)
		}
		for _, r := range rep.Records {
			if r.Skipped == 0 {
				continue
			}
			if r.Record == "attachment" {
				for _, why := range r.Reasons {
					if why.Outcome == "skipped" && !strings.Contains(why.Reason, "no rendered content") {
						t.Errorf("%s: attachment skipped: %s", scen, why.Reason)
					}
				}
				continue
			}
			if !notSent[r.Record] {
				t.Errorf("%s: %d %s record(s) skipped (%v): it reaches the model", scen, r.Skipped, r.Record, r.Reasons)
			}
		}
		if got, want := importedOf(rep, "attachment"), renderedAttachments(t, f); got != want {
			t.Errorf("%s: %d attachment nodes imported, the file has %d attachments with rendered content", scen, got, want)
		}
		mustRun(t, "verify", "--strict", dst)
		out = append(out, imported{dir: dst, session: f})
	}
	return out
}

func importedOf(rep importReport, name string) int {
	for _, r := range rep.Records {
		if r.Record == name {
			return r.Imported
		}
	}
	return 0
}

// renderedAttachments counts, from the raw file and its sub-agent files,
// the attachment records whose rendered content the client sent.
func renderedAttachments(t *testing.T, session string) int {
	t.Helper()
	files := []string{session}
	subs, _ := filepath.Glob(filepath.Join(strings.TrimSuffix(session, ".jsonl"), "subagents", "*.jsonl"))
	files = append(files, subs...)
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			var r struct {
				Type     string `json:"type"`
				Rendered []struct {
					Content string `json:"content"`
				} `json:"rendered"`
			}
			if json.Unmarshal(line, &r) != nil || r.Type != "attachment" {
				continue
			}
			for _, x := range r.Rendered {
				if x.Content != "" {
					n++
					break
				}
			}
		}
	}
	return n
}

func TestOracleImportVerify(t *testing.T) { forEachVersion(t, oracleImportVerify) }

func oracleImportVerify(t *testing.T, root string) {
	for _, scen := range scenarioDirs(t, root) {
		t.Run(scen, func(t *testing.T) { importAll(t, root, scen) })
	}
}

// wireMsg is a message in the comparison form (normalise).
type wireMsg struct {
	Role   string
	Blocks []string
}

func (m wireMsg) String() string { return m.Role + ": " + strings.Join(m.Blocks, " | ") }

// request is a captured Messages request body.
// readRequest reads a recorded request file: its key (the file's number),
// its bytes and its body.
func readRequest(t *testing.T, rf string) (k string, b []byte, req request) {
	t.Helper()
	b, err := os.ReadFile(rf)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &req); err != nil {
		t.Fatalf("%s: %v", rf, err)
	}
	return strings.TrimSuffix(filepath.Base(rf), "-messages.json"), b, req
}

type request struct {
	System   json.RawMessage   `json:"system"`
	Messages []json.RawMessage `json:"messages"`
	Tools    []json.RawMessage `json:"tools"`
}

type rawMsg struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type rawBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// normalise is the written-down comparison (docs/INTEROP-claude-code.md
// "Comparison"): cache_control and other per-request markers are not
// compared; string content is one text block; a message with no content
// (Claude Code's per-turn control message) is dropped; consecutive
// same-role messages merge, as the API merges them; a message's
// consecutive text blocks are joined by a blank line, each without its
// trailing newlines (Claude Code joins merged user lines with "\n" and
// system texts with "\n\n"; ctxfold keeps one block per node).
func normalise(t *testing.T, msgs []json.RawMessage) []wireMsg {
	t.Helper()
	var out []wireMsg
	for _, raw := range msgs {
		var m rawMsg
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("message: %v", err)
		}
		blocks := contentBlocks(t, m.Content)
		if len(blocks) > 0 && blocks[0].Type == "text" {
			// The session format marks a summary's content with a fixed
			// prefix (docs/FORMAT.md); the client sends its text bare.
			blocks[0].Text = strings.TrimPrefix(blocks[0].Text, transcript.SummaryPrefix)
		}
		var bs []string
		var texts []string
		flush := func() {
			if len(texts) > 0 {
				bs = append(bs, "text:"+strings.Join(texts, "\n\n"))
				texts = nil
			}
		}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				if s := strings.TrimRight(b.Text, "\n"); s != "" {
					texts = append(texts, s)
				}
			case "tool_use":
				flush()
				bs = append(bs, fmt.Sprintf("tool_use:%s:%s:%s", b.ID, b.Name, canonJSON(b.Input)))
			case "tool_result":
				flush()
				var text string
				for _, c := range contentBlocks(t, b.Content) {
					text += c.Text
				}
				bs = append(bs, fmt.Sprintf("tool_result:%s:error=%v:%s", b.ToolUseID, b.IsError, text))
			case "thinking", "redacted_thinking":
				// The fake sends none.
			default:
				flush()
				bs = append(bs, b.Type)
			}
		}
		flush()
		if len(bs) == 0 {
			continue
		}
		if k := len(out) - 1; k >= 0 && out[k].Role == m.Role {
			out[k].Blocks = mergeBlocks(out[k].Blocks, bs)
			continue
		}
		out = append(out, wireMsg{Role: m.Role, Blocks: bs})
	}
	return out
}

func mergeBlocks(a, b []string) []string {
	if len(a) > 0 && len(b) > 0 && strings.HasPrefix(a[len(a)-1], "text:") && strings.HasPrefix(b[0], "text:") {
		a[len(a)-1] += "\n\n" + strings.TrimPrefix(b[0], "text:")
		b = b[1:]
	}
	return append(a, b...)
}

func contentBlocks(t *testing.T, raw json.RawMessage) []rawBlock {
	t.Helper()
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		var s string
		_ = json.Unmarshal(raw, &s)
		return []rawBlock{{Type: "text", Text: s}}
	}
	var bs []rawBlock
	if err := json.Unmarshal(raw, &bs); err != nil {
		t.Fatalf("content: %v: %s", err, raw)
	}
	return bs
}

func canonJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// billingHeader is the first system block Claude Code sends, an
// attribution header of the request that no transcript record holds.
var billingHeader = regexp.MustCompile(`^x-anthropic-billing-header:`)

func systemText(t *testing.T, raw json.RawMessage) string {
	var parts []string
	for _, b := range contentBlocks(t, raw) {
		if b.Type == "text" && !billingHeader.MatchString(b.Text) {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}

// toolsCanon strips per-request markers (cache_control) from tool
// definitions.
func toolsCanon(tools []json.RawMessage) []string {
	var out []string
	for _, raw := range tools {
		var m map[string]any
		if json.Unmarshal(raw, &m) != nil {
			out = append(out, string(raw))
			continue
		}
		delete(m, "cache_control")
		b, _ := json.Marshal(m)
		out = append(out, string(b))
	}
	return out
}

// compactionPrompt marks the summarisation request /compact sends: the
// view plus an instruction no transcript record holds.
const compactionPrompt = "CRITICAL: Respond with TEXT ONLY"

// answer is the node that answered a request: its id, predecessor (the
// last node of the view the request read) and whether it was written
// before the session's summary (the request read the pre-compaction view).
type answer struct {
	id, pred   string
	preSummary bool
}

// answering maps a request number to the node that answered it, from the
// fake's message ids (msg_fake_reqNNNN) kept in metadata.claude_code.
func answering(t *testing.T, dir string) map[string]answer {
	t.Helper()
	out := map[string]answer{}
	summarySeen := false
	b, err := os.ReadFile(filepath.Join(dir, "nodes.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		var n struct {
			ID          string `json:"id"`
			Predecessor string `json:"predecessor"`
			Metadata    struct {
				ClaudeCode struct {
					MessageID string `json:"message_id"`
				} `json:"claude_code"`
			} `json:"metadata"`
		}
		if json.Unmarshal(line, &n) != nil {
			continue
		}
		if strings.HasPrefix(n.ID, "summary_") {
			summarySeen = true
		}
		if id := n.Metadata.ClaudeCode.MessageID; strings.HasPrefix(id, "msg_fake_req") {
			out[strings.TrimPrefix(id, "msg_fake_req")] = answer{n.ID, n.Predecessor, !summarySeen}
		}
	}
	return out
}

func TestOracleRenderEqualsRequests(t *testing.T) { forEachVersion(t, oracleRender) }

func oracleRender(t *testing.T, root string) {
	for _, scen := range scenarioDirs(t, root) {
		t.Run(scen, func(t *testing.T) {
			sessions := importAll(t, root, scen)
			reqs, _ := filepath.Glob(filepath.Join(root, scen, "requests", "*-messages.json"))
			compared := 0
			for _, rf := range reqs {
				k, b, req := readRequest(t, rf)
				if bytes.Contains(b, []byte(compactionPrompt)) {
					// The client's summarisation request: the view it
					// summarised plus an instruction no record holds. That
					// view must be what the summary node covers (oracle 3).
					compareCompaction(t, k, sessions, req)
					compared++
					continue
				}
				var dir, head string
				args := []string{"--format", "anthropic"}
				for _, s := range sessions {
					if a, ok := answering(t, s.dir)[k]; ok {
						dir, head = s.dir, a.pred
						if a.preSummary {
							// Written before the compaction: the view it read
							// is the one without the summary.
							args = append(args, "--raw")
						}
					}
				}
				if dir == "" {
					t.Errorf("request %s: no imported node answers it", k)
					continue
				}
				out := mustRun(t, append([]string{"render", dir, "--head", head}, args...)...)
				var got request
				if err := json.Unmarshal([]byte(out), &got); err != nil {
					t.Fatalf("render: %v", err)
				}
				if gs, ws := systemText(t, got.System), systemText(t, req.System); gs != ws {
					t.Errorf("request %s: system differs:\n got %.200q\nwant %.200q", k, gs, ws)
				}
				if g, w := strings.Join(toolsCanon(got.Tools), "\n"), strings.Join(toolsCanon(req.Tools), "\n"); g != w {
					t.Errorf("request %s: tools differ:\n got %.300s\nwant %.300s", k, g, w)
				}
				compareMessages(t, k, req.Messages, got.Messages)
				compared++
			}
			if compared == 0 {
				t.Fatalf("no request compared")
			}
		})
	}
}

func compareMessages(t *testing.T, k string, want, got []json.RawMessage) {
	t.Helper()
	w, g := normalise(t, want), normalise(t, got)
	for i := 0; i < max(len(w), len(g)); i++ {
		var ws, gs string
		if i < len(w) {
			ws = w[i].String()
		}
		if i < len(g) {
			gs = g[i].String()
		}
		if ws != gs {
			t.Errorf("request %s: message %d of %d/%d differs:\n got %.400q\nwant %.400q", k, i, len(g), len(w), gs, ws)
			return
		}
	}
}

// TestOracleCompactionKeepsPreservedTail: Claude Code's /compact imports as
// a summary node covering exactly the messages before the ones it kept
// verbatim (compactMetadata.preservedMessages), and the kept messages follow
// the summary in the render, as in the client's next request (oracle 3; the
// request comparison itself is TestOracleRenderEqualsRequests/compact).
func TestOracleCompactionKeepsPreservedTail(t *testing.T) {
	forEachVersion(t, compactionKeepsPreservedTail)
}

func compactionKeepsPreservedTail(t *testing.T, root string) {
	s := importAll(t, root, "compact")[0]
	var preserved []string
	b, err := os.ReadFile(s.session)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		var r struct {
			Subtype         string `json:"subtype"`
			CompactMetadata struct {
				PreservedMessages struct {
					UUIDs []string `json:"uuids"`
				} `json:"preservedMessages"`
			} `json:"compactMetadata"`
		}
		if json.Unmarshal(line, &r) == nil && r.Subtype == "compact_boundary" {
			preserved = r.CompactMetadata.PreservedMessages.UUIDs
		}
	}
	if len(preserved) == 0 {
		t.Fatal("the recording has no compact_boundary with preservedMessages")
	}
	var covers []string
	var summaryID string
	for id, c := range storedSummaries(t, s.dir) {
		covers, summaryID = c, id
	}
	if summaryID == "" {
		t.Fatal("no summary node")
	}
	for _, c := range covers {
		for _, p := range preserved {
			if c == p {
				t.Errorf("summary covers %s, which Claude Code kept verbatim", p)
			}
		}
	}
	ids := strings.Fields(mustRun(t, "render", s.dir, "--format", "ids"))
	at := -1
	for i, id := range ids {
		if id == summaryID {
			at = i
		}
	}
	if at < 0 || at+len(preserved) >= len(ids) {
		t.Fatalf("summary %s not followed by the kept messages in the view %v", summaryID, ids)
	}
	if got := ids[at+1 : at+1+len(preserved)]; strings.Join(got, " ") != strings.Join(preserved, " ") {
		t.Errorf("after the summary the view has %v, Claude Code kept %v", got, preserved)
	}
}

// TestOracleEstimateCountsRecordedPrefix: estimate runs on every imported
// scenario and counts the system prompt and tool definitions the client
// recorded (oracle 4).
func TestOracleEstimateCountsRecordedPrefix(t *testing.T) { forEachVersion(t, oracleEstimate) }

func oracleEstimate(t *testing.T, root string) {
	for _, scen := range scenarioDirs(t, root) {
		t.Run(scen, func(t *testing.T) {
			for _, s := range importAll(t, root, scen) {
				// No flags: the recorded model (claude-opus-5-5) is in the
				// model table, without a warning.
				out, errOut, code := ctxfold(t, "estimate", s.dir, "--json")
				if strings.Contains(errOut, "not in the model table") {
					t.Errorf("estimate warns: %s", strings.TrimSpace(errOut))
				}
				if code != 0 {
					t.Fatalf("estimate: exit %d: %s", code, errOut)
				}
				var est struct {
					Categories map[string]int `json:"categories"`
				}
				if err := json.Unmarshal([]byte(out), &est); err != nil {
					t.Fatalf("estimate --json: %v", err)
				}
				if est.Categories["system"] == 0 || est.Categories["tool_definitions"] == 0 {
					t.Errorf("system %d, tool_definitions %d: the recorded prompt prefix is not counted",
						est.Categories["system"], est.Categories["tool_definitions"])
				}
			}
		})
	}
}

// compareCompaction checks a summarisation request against the raw view
// ending at the summary's last covered node, the instruction (the last
// text block, which no record holds) removed.
func compareCompaction(t *testing.T, k string, sessions []imported, req request) {
	t.Helper()
	var dir, last string
	for _, s := range sessions {
		for _, c := range storedSummaries(t, s.dir) {
			dir, last = s.dir, c[len(c)-1]
		}
	}
	if dir == "" {
		t.Errorf("request %s: a compaction request, but no summary node was imported", k)
		return
	}
	msgs := append([]json.RawMessage(nil), req.Messages...)
	var m rawMsg
	if err := json.Unmarshal(msgs[len(msgs)-1], &m); err != nil {
		t.Fatal(err)
	}
	var blocks []json.RawMessage
	if err := json.Unmarshal(m.Content, &blocks); err != nil || len(blocks) == 0 {
		t.Fatalf("request %s: last message %s", k, m.Content)
	}
	if !bytes.Contains(blocks[len(blocks)-1], []byte(compactionPrompt)) {
		t.Fatalf("request %s: the instruction is not the last block", k)
	}
	trimmed, _ := json.Marshal(map[string]any{"role": m.Role, "content": blocks[:len(blocks)-1]})
	msgs[len(msgs)-1] = trimmed
	var got request
	out := mustRun(t, "render", dir, "--head", last, "--raw", "--format", "anthropic")
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if gs, ws := systemText(t, got.System), systemText(t, req.System); gs != ws {
		t.Errorf("request %s: system differs:\n got %.200q\nwant %.200q", k, gs, ws)
	}
	if g, w := strings.Join(toolsCanon(got.Tools), "\n"), strings.Join(toolsCanon(req.Tools), "\n"); g != w {
		t.Errorf("request %s: tools differ", k)
	}
	compareMessages(t, k, msgs, got.Messages)
}

// storedSummaries yields each summary node of the session at dir, in file
// order, with its coverage as ids (docs/FORMAT.md §4: a covers_span
// walked, or a version 1 covers_ids list).
func storedSummaries(t *testing.T, dir string) func(yield func(string, []string) bool) {
	t.Helper()
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.S.Close() })
	return func(yield func(string, []string) bool) {
		for i := range g.Len() {
			if c := g.CoverIDs(i); g.S.IsSummary(i) && len(c) > 0 && !yield(g.ID(i), c) {
				return
			}
		}
	}
}
