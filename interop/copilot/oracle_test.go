// Package copilot_test checks ctxfold against what the real GitHub Copilot
// CLI 1.0.102 sent: the event logs and requests recorded by
// interop/copilot/record.sh (docs/INTEROP-copilot.md) are imported,
// verified, rendered at the point each request was made and compared with
// the request's messages. The committed recordings need no client;
// CTXFOLD_INTEROP_LIVE=1 re-records with the installed client first
// (live_test.go).
package copilot_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/interoptest"
	"github.com/ctxfold/ctxfold/transcript"
)

// The shared in-process runner and JSON difference (internal/interoptest).
var (
	ctxfold = interoptest.Ctxfold
)

const version = "1.0.102"

var recordings = filepath.Join("..", "..", "testdata", "interop", "copilot", version)

var scenarios = []string{"chat", "tool", "compact", "recompact", "auto-compact", "anthropic", "responses", "subagent"}

// compacted are the scenarios whose client compacted its history.
var compacted = map[string]bool{"compact": true, "recompact": true, "auto-compact": true, "anthropic": true}

// wires are the render formats of the scenarios not recorded over Chat
// Completions (--format openai).
var wires = map[string]string{"anthropic": "anthropic", "responses": "responses"}

// ctxfold runs one command line in-process.

type event struct {
	Type    string          `json:"type"`
	ID      string          `json:"id"`
	AgentID string          `json:"agentId"`
	Data    json.RawMessage `json:"data"`
}

// call is one request of a conversation (the session's, or a sub-agent's:
// agent) as the log records it: the assistant message it produced,
// whether the client had applied a compaction when it sent it, and the
// system prompt in effect.
type call struct {
	apiCallID, answer, system, agent string
	compacted                        bool
	// line is the answer's line; superseded marks a request made while a
	// summary was in force that a later compaction replaced.
	line       int
	superseded bool
}

// calls reads the log: each usage record names its API call, the
// assistant message with the same apiCallId answers it. lastSystem is
// each conversation's last system prompt, by agent id.
func calls(t *testing.T, file string) (out []call, lastSystem map[string]string) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	system := map[string]string{}
	applied := false
	byCall := map[string]int{}
	line := 0
	for sc.Scan() {
		line++
		var ev event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		var d struct {
			Content   string `json:"content"`
			APICallID string `json:"apiCallId"`
			Success   bool   `json:"success"`
			Usage     struct {
				APICallID string `json:"apiCallId"`
			} `json:"usage"`
		}
		json.Unmarshal(ev.Data, &d)
		switch ev.Type {
		case "system.message":
			system[ev.AgentID] = d.Content
		case "session.compaction_complete":
			if d.Success && ev.AgentID == "" {
				for i := range out {
					out[i].superseded = out[i].superseded || out[i].compacted
				}
				applied = true
			}
		case "session.usage_record":
			byCall[d.Usage.APICallID] = len(out)
			out = append(out, call{apiCallID: d.Usage.APICallID, system: system[ev.AgentID], agent: ev.AgentID,
				compacted: applied && ev.AgentID == ""})
		case "assistant.message":
			if i, ok := byCall[d.APICallID]; ok && out[i].answer == "" {
				out[i].answer, out[i].line = ev.ID, line
			}
		}
	}
	return out, system
}

// request is one captured request: its system prompt as text and its
// messages, normalised (normalizeRequest).
type request struct {
	system   string
	messages []map[string]any
}

// seqOf is the request a fake's reply id answers: its trailing digits
// (chatcmpl-fake-NNN, msg_fake_reqNNNN answer request NNN).
func seqOf(apiCallID string) int {
	i := len(apiCallID)
	for i > 0 && apiCallID[i-1] >= '0' && apiCallID[i-1] <= '9' {
		i--
	}
	n, _ := strconv.Atoi(apiCallID[i:])
	return n
}

// requests reads requests.jsonl by seq, blobs resolved.
func requests(t *testing.T, dir string) map[int]request {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	blob := func(v any) any {
		ref, ok := v.(map[string]any)
		if !ok || ref["$blob"] == nil {
			return v
		}
		raw, err := os.ReadFile(filepath.Join(dir, "..", "blobs", ref["$blob"].(string)))
		if err != nil {
			t.Fatal(err)
		}
		var out any
		json.Unmarshal(raw, &out)
		return out
	}
	out := map[int]request{}
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var r struct {
			Seq  int `json:"seq"`
			Body struct {
				System       any              `json:"system"`
				Instructions any              `json:"instructions"`
				Messages     []map[string]any `json:"messages"`
				Input        []map[string]any `json:"input"`
			} `json:"body"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		var req request
		if r.Body.System != nil {
			// Anthropic: the system prompt's blocks, which the client
			// splits from one text at a blank line.
			var parts []string
			for _, b := range blob(r.Body.System).([]any) {
				parts = append(parts, b.(map[string]any)["text"].(string))
			}
			req.system = strings.Join(parts, "\n\n")
		}
		if r.Body.Instructions != nil {
			req.system, _ = blob(r.Body.Instructions).(string)
		}
		for _, m := range append(r.Body.Messages, r.Body.Input...) {
			if c, ok := m["content"]; ok {
				m["content"] = blob(c)
			}
			if m["role"] == "system" {
				req.system, _ = m["content"].(string)
				continue
			}
			req.messages = append(req.messages, normalizeRequest(m))
		}
		out[r.Seq] = req
	}
	return out
}

// normalizeRequest drops what the client adds that no transcript holds:
// its bookkeeping fields (__copilot…), an empty refusal it echoes back,
// Anthropic cache markers, the item id and status of a Responses function
// call or assistant message and an output text's empty annotations (the
// log keeps the call id only).
func normalizeRequest(m map[string]any) map[string]any {
	for k, v := range m {
		if strings.HasPrefix(k, "__copilot") || k == "refusal" && v == nil {
			delete(m, k)
		}
	}
	if m["type"] == "function_call" || m["type"] == "message" && m["role"] == "assistant" {
		delete(m, "id")
		delete(m, "status")
	}
	if blocks, ok := m["content"].([]any); ok {
		for _, b := range blocks {
			if bm, ok := b.(map[string]any); ok {
				delete(bm, "cache_control")
				if a, ok := bm["annotations"].([]any); ok && len(a) == 0 {
					delete(bm, "annotations")
				}
			}
		}
	}
	return m
}

// renderCut imports the log's lines before line and renders its HEAD:
// the view of a request made while a since-replaced summary was active.
func renderCut(t *testing.T, file string, line int, wire string) request {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	cut := filepath.Join(t.TempDir(), "events.jsonl")
	if err := os.WriteFile(cut, bytes.Join(lines[:line-1], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	sess := filepath.Join(t.TempDir(), "cut")
	if _, errOut, code := ctxfold(t, "import", cut, "-o", sess); code != 0 {
		t.Fatalf("import of the cut log: exit %d: %s", code, errOut)
	}
	return renderHead(t, sess, nil, wire)
}

// renderBefore renders the session at the predecessor of the assistant
// node answer (the request that produced it), raw when the client had not
// compacted yet, in the scenario's wire format.
func renderBefore(t *testing.T, sess, answer, wire string, compacted bool) request {
	t.Helper()
	out, errOut, code := ctxfold(t, "render", sess, "--head", answer, "--format", "ids", "--raw")
	if code != 0 {
		t.Fatalf("render ids: exit %d: %s", code, errOut)
	}
	ids := strings.Fields(out)
	if len(ids) < 2 || ids[len(ids)-1] != answer {
		t.Fatalf("render --head %s: %v", answer, ids)
	}
	args := []string{"--head", ids[len(ids)-2]}
	if !compacted {
		args = append(args, "--raw")
	}
	return renderHead(t, sess, args, wire)
}

// renderHead renders the session with args in the wire format, split into
// its system prompt and its normalised messages.
func renderHead(t *testing.T, sess string, args []string, wire string) request {
	t.Helper()
	out, errOut, code := ctxfold(t, append([]string{"render", sess, "--format", wire}, args...)...)
	if code != 0 {
		t.Fatalf("render: exit %d: %s", code, errOut)
	}
	var got request
	var msgs []map[string]any
	if wire == "anthropic" {
		var body struct {
			System   string           `json:"system"`
			Messages []map[string]any `json:"messages"`
		}
		if err := json.Unmarshal([]byte(out), &body); err != nil {
			t.Fatalf("render output: %v\n%s", err, out)
		}
		got.system, msgs = body.System, body.Messages
	} else if err := json.Unmarshal([]byte(out), &msgs); err != nil {
		t.Fatalf("render output: %v\n%s", err, out)
	}
	for _, m := range msgs {
		if m["role"] == "system" || m["role"] == "developer" && got.system == "" && len(got.messages) == 0 {
			got.system, _ = m["content"].(string)
			if parts, ok := m["content"].([]any); ok && len(parts) == 1 { // a developer message's input_text
				got.system, _ = parts[0].(map[string]any)["text"].(string)
			}
			continue
		}
		got.messages = append(got.messages, normalizeRender(m, wire))
	}
	return got
}

// normalizeRender removes the summary's first line, the format's marker
// (docs/FORMAT.md §4): after it is the client's text. On the Anthropic
// wire the client sends text blocks without trailing whitespace.
func normalizeRender(m map[string]any, wire string) map[string]any {
	if s, ok := m["content"].(string); ok && m["role"] == "user" {
		m["content"] = strings.TrimPrefix(s, transcript.SummaryPrefix)
	}
	blocks, _ := m["content"].([]any)
	for _, b := range blocks {
		bm, ok := b.(map[string]any)
		if !ok || bm["type"] != "text" {
			continue
		}
		text, _ := bm["text"].(string)
		text = strings.TrimPrefix(text, transcript.SummaryPrefix)
		if wire == "anthropic" {
			text = strings.TrimRight(text, " \n\t")
		}
		bm["text"] = text
	}
	return m
}

// TestOracle: render at the point of each request the client made equals
// the request's messages, after its compaction too; the system prompt is
// the one the client had written by then, and the root system node holds
// its last one (docs/INTEROP-copilot.md).
func TestOracle(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc, func(t *testing.T) { checkScenario(t, filepath.Join(recordings, sc), sc) })
	}
}

// checkScenario imports one recorded scenario's events.jsonl, verifies it
// and compares render at each request with the request (requests.jsonl,
// blobs in ../blobs).
func checkScenario(t *testing.T, dir, sc string) {
	t.Helper()
	file := filepath.Join(dir, "events.jsonl")
	sess := filepath.Join(t.TempDir(), "s")
	out, errOut, code := ctxfold(t, "import", file, "-o", sess, "--json")
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, errOut)
	}
	checkReport(t, out)
	if out, errOut, code := ctxfold(t, "verify", "--strict", sess); code != 0 {
		t.Fatalf("verify: exit %d: %s%s", code, out, errOut)
	}
	cs, lastSystem := calls(t, file)
	reqs := requests(t, dir)
	if len(cs) == 0 {
		t.Fatal("no usage records")
	}
	wire := wires[sc]
	if wire == "" {
		wire = "openai"
	}
	summarised := 0
	for _, c := range cs {
		want, ok := reqs[seqOf(c.apiCallID)]
		if !ok || c.answer == "" {
			t.Fatalf("call %s: request %v, answer %q", c.apiCallID, ok, c.answer)
		}
		last := lastSystem[c.agent]
		var got request
		if c.superseded {
			// One summary is active at a time (docs/FORMAT.md §4): the
			// log as it was then, cut before the answer, renders it.
			got, last = renderCut(t, file, c.line, wire), c.system
		} else {
			got = renderBefore(t, sess, c.answer, wire, c.compacted)
		}
		if c.compacted {
			summarised++
		}
		if got.system != last || want.system != c.system {
			t.Errorf("call %s: the system prompt is not the client's (last, or the one in effect)", c.apiCallID)
		}
		if !reflect.DeepEqual(got.messages, want.messages) {
			g, _ := json.MarshalIndent(got.messages, "", " ")
			w, _ := json.MarshalIndent(want.messages, "", " ")
			t.Errorf("call %s: render differs from the request\nrender:\n%s\nrequest:\n%s", c.apiCallID, g, w)
		}
	}
	if compacted[sc] != (summarised > 0) {
		t.Errorf("%d requests after a compaction; the scenario compacts: %v", summarised, compacted[sc])
	}
	// The last request is rendered whole, system prompt included.
	if last := cs[len(cs)-1]; last.system != lastSystem[""] {
		t.Errorf("the last request's system prompt is not the log's last")
	}
}

// sent are the events whose content reaches the model: the import may
// skip none of them (a compaction only when it did not apply).
var sent = map[string]string{"user.message": "", "assistant.message": "", "tool.execution_complete": "", "system.message": "",
	"session.compaction_complete": "did not apply"}

// checkReport: every event is counted, and none that reached the model
// is skipped.
func checkReport(t *testing.T, out string) {
	t.Helper()
	var rep struct {
		Records []struct {
			Record  string `json:"record"`
			Skipped int    `json:"skipped"`
			Reasons []struct {
				Outcome, Reason string
			} `json:"reasons"`
		} `json:"records"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Records) == 0 {
		t.Fatalf("import report: %v\n%s", err, out)
	}
	for _, r := range rep.Records {
		allowed, isSent := sent[r.Record]
		if !isSent || r.Skipped == 0 {
			continue
		}
		for _, why := range r.Reasons {
			if why.Outcome == "skipped" && (allowed == "" || !strings.Contains(why.Reason, allowed)) {
				t.Errorf("%s skipped: %s", r.Record, why.Reason)
			}
		}
	}
}
