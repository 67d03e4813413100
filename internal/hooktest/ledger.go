package hooktest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/fake/openai"
)

// What the live tests of the clients whose summariser ctxfold hands the
// fact ledger share (OpenCode, Kilo, pi: docs/HOOKS.md, "The fact
// ledger").

// LedgerRun is one session's figures beyond Run's: what the compaction
// request carried and what ctxfold's audit of the client's summary found.
type LedgerRun struct {
	Run
	// LedgerInRequest: the summariser's request held the keep block;
	// PlantedInLedger how many planted facts it listed.
	LedgerInRequest bool `json:"ledger_in_request"`
	PlantedInLedger int  `json:"planted_in_ledger"`
	// Ledger is the hook state's record of the ledger (tokens counted by
	// estimate); AuditSurvivalPct the survival `ctxfold audit` reports for
	// the client's summary, of AuditFacts facts.
	Ledger           json.RawMessage `json:"ledger,omitempty"`
	AuditSurvivalPct float64         `json:"audit_survival_pct"`
	AuditFacts       int             `json:"audit_facts"`
	// Recall is what ChatRecall found (nil: not run).
	Recall map[string]any `json:"recall,omitempty"`
	// Later is the figures of the request of a prompt after the measured
	// one (nil: none sent).
	Later *Run `json:"later,omitempty"`
}

// MeasureLedger is mode's figures from the summariser's request and the
// conversation of the request after the compaction; home is the session's
// HOME (ctxfold's hook state under it), client names it in the log.
func MeasureLedger(t testing.TB, client, mode, summarize string, next []byte, home string) LedgerRun {
	r := LedgerRun{Run: Measure(mode, Planted, next, len(next), func(f Fact) { t.Logf("%s %s: lost %s: %s", client, mode, f.Kind, f.Text) })}
	block := KeepBlock(summarize)
	r.LedgerInRequest = block != ""
	for _, f := range Planted {
		if strings.Contains(block, f.Text) {
			r.PlantedInLedger++
		}
	}
	if mode == "with" {
		r.Context = block
		r.Ledger = StateField(home, "ledger")
		r.Injection = StateField(home, "injected")
	}
	return r
}

// CheckLedger checks issue 42's acceptance on a client's two runs (without
// and with ctxfold): the compaction request carries the ledger with ≥ 95%
// of the planted facts, ctxfold's audit of the client's summary finds ≥
// 95% of its facts, the request after the compaction carries ≥ 95% of the
// planted facts and more than without ctxfold, whose request holds no
// ledger.
func CheckLedger(t testing.TB, client string, runs []LedgerRun) {
	t.Helper()
	for _, r := range runs {
		t.Logf("%s %s ctxfold: %d of %d planted facts in the request after the compaction (%.0f%%); ledger in the compaction request: %v (%d planted facts); audit %.1f%% of %d facts",
			client, r.Mode, r.KeptCount, r.Planted, r.SurvivalPct, r.LedgerInRequest, r.PlantedInLedger, r.AuditSurvivalPct, r.AuditFacts)
	}
	without, with := runs[0], runs[1]
	if !with.LedgerInRequest || with.PlantedInLedger*100 < len(Planted)*95 {
		t.Errorf("%s: the compaction request carries the ledger %v with %d of %d planted facts", client, with.LedgerInRequest, with.PlantedInLedger, len(Planted))
	}
	if with.AuditSurvivalPct < 95 {
		t.Errorf("%s: ctxfold's audit of the client's summary: %.1f%% of %d facts survive", client, with.AuditSurvivalPct, with.AuditFacts)
	}
	if with.SurvivalPct < 95 || without.SurvivalPct >= with.SurvivalPct {
		t.Errorf("%s: planted facts after the compaction: %.0f%% with ctxfold, %.0f%% without", client, with.SurvivalPct, without.SurvivalPct)
	}
	if without.LedgerInRequest {
		t.Errorf("%s: the control's compaction request holds a ledger", client)
	}
}

// RecordLedger writes, when CTXFOLD_HOOKS_RECORD names a folder (the
// clients' hooks.sh), the runs to <folder>/<name>/<version>/figures.json.
func RecordLedger(t testing.TB, name, client string, runs []LedgerRun) {
	t.Helper()
	dir := os.Getenv("CTXFOLD_HOOKS_RECORD")
	if dir == "" {
		return
	}
	version := ClientVersion(client)
	if version == "unknown" { // pi prints its version on stderr
		if b, err := exec.Command(client, "--version").CombinedOutput(); err == nil && len(bytes.Fields(b)) > 0 {
			version = string(bytes.Fields(b)[0])
		}
	}
	out := filepath.Join(dir, name, version)
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(filepath.Join(out, "figures.json"), map[string]any{"client": name, "version": version, "runs": runs}); err != nil {
		t.Fatal(err)
	}
}

// StartOpenAI serves the fake OpenAI provider on loopback, recording
// requests in reqs, until the test ends; it returns the base URL.
func StartOpenAI(t testing.TB, reqs string) string { return StartOpenAIWith(t, reqs, false) }

// StartOpenAIWith is StartOpenAI with the fake's Server.IgnoreKeep.
func StartOpenAIWith(t testing.TB, reqs string, ignoreKeep bool) string {
	t.Helper()
	srv, err := openai.New(reqs)
	if err != nil {
		t.Fatal(err)
	}
	srv.IgnoreKeep = ignoreKeep
	l, err := openai.Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = srv.Serve(ctx, l); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return "http://" + l.Addr().String() + "/v1"
}

// CompactionAndNext reads the Chat Completions requests the fake recorded
// in reqs: the last whose last message's text isSummary says is the
// compaction request (that text), and the conversation (messages, as
// sent) of the first whose trailing user messages hold next.
func CompactionAndNext(t testing.TB, reqs string, isSummary func(string) bool, next string) (summarize string, conversation []byte) {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(reqs, "request-*.json"))
	sort.Strings(names)
	for _, n := range names {
		b, _ := os.ReadFile(n)
		var req struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if json.Unmarshal(b, &req) != nil || len(req.Messages) == 0 {
			continue
		}
		last := req.Messages[len(req.Messages)-1]
		text := ContentText(last.Content)
		// The prompt, or a message a hook added after it (pi's
		// before_agent_start), ends the request.
		asks := false
		for k := len(req.Messages) - 1; k >= 0 && req.Messages[k].Role == "user"; k-- {
			asks = asks || strings.Contains(ContentText(req.Messages[k].Content), next)
		}
		switch {
		case isSummary(text):
			summarize = text
		case asks && conversation == nil:
			conversation, _ = json.Marshal(req.Messages)
		}
	}
	if summarize == "" || conversation == nil {
		t.Fatalf("%s: no compaction request (%v) or no request after it (%v)", reqs, summarize != "", conversation != nil)
	}
	return summarize, conversation
}

// ContentText is a chat message's content, or a tool call's output, as
// text: a string, or the text of its parts, a line each.
func ContentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text + "\n")
	}
	return b.String()
}

// KeepBlock is the text between the ledger's keep lines ("" none).
func KeepBlock(text string) string {
	const open, close = "\n<ctxfold-keep>\n", "\n</ctxfold-keep>"
	i := strings.Index(text, open)
	j := strings.Index(text, close)
	if i < 0 || j < i {
		return ""
	}
	return text[i+len(open) : j]
}

// StateField is one field of the hook state ctxfold keeps for the one
// session under home (home/.cache/ctxfold/hook/*.json), with what differs
// at every recording (times, summary ids) taken out; nil when absent.
func StateField(home, field string) json.RawMessage {
	states, _ := filepath.Glob(filepath.Join(home, ".cache", "ctxfold", "hook", "*.json"))
	if len(states) != 1 {
		return nil
	}
	b, _ := os.ReadFile(states[0])
	var st map[string]json.RawMessage
	if json.Unmarshal(b, &st) != nil || st[field] == nil {
		return nil
	}
	var v any
	_ = json.Unmarshal(st[field], &v)
	strip := func(m map[string]any) {
		delete(m, "at")
		if _, ok := m["summary_id"]; ok {
			m["summary_id"] = "<summary_id>"
		}
	}
	switch x := v.(type) {
	case map[string]any:
		strip(x)
	case []any:
		for _, e := range x {
			if m, ok := e.(map[string]any); ok {
				strip(m)
			}
		}
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimSpace(out.Bytes())
}

// Audit runs `ctxfold audit TARGET --json` with home as HOME and returns
// the survival of the active summary's facts and their number.
func Audit(t testing.TB, bin, home, target string) (float64, int) {
	t.Helper()
	c := exec.Command(bin, "audit", target, "--json")
	c.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	out, err := c.Output()
	if err != nil {
		t.Fatalf("ctxfold audit %s: %v\n%s", target, err, out)
	}
	var res struct {
		Summaries []struct {
			Total       int     `json:"total"`
			SurvivalPct float64 `json:"survival_pct"`
		} `json:"summaries"`
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Summaries) == 0 {
		t.Fatalf("ctxfold audit --json: %v\n%s", err, out)
	}
	return res.Summaries[0].SurvivalPct, res.Summaries[0].Total
}

// LedgerTurns plant Planted in two runs of a client (the command and its
// error only in a tool call and its output); the second reports more
// input tokens than the model's window (openai.MarkerInflate), so the
// client compacts on its own once it ends. Two runs keep the test short:
// a client run takes tens of seconds on a loaded machine.
var LedgerTurns = []string{
	"Please migrate the session store to SQLite. Never touch /etc/ctxfold/prod.toml and keep the WAL under 64 MB " +
		"(see https://sqlite.org/wal.html). The entry point is `openStoreWithRetry` in internal/store/open_store.go. " +
		"Check the old store directory first. [[shell: ls /nonexistent-ctxfold-dir]]",
	"No, actually use the flock-based lock instead of the pid file; the lock timeout is 250 ms. " + openai.MarkerInflate,
}

// NextPrompt is the prompt after the compaction whose request is measured.
const NextPrompt = "What should I do next?"

// ChatRecall reads the Chat Completions requests the fake recorded in
// reqs for the recall (openai.MarkerRecall): the request that sends back
// a read_turns call's result, and whether that result carries query
// verbatim; next is the conversation before the recall, which must not
// (query_visible_before_recall).
func ChatRecall(reqs, query string, next []byte) map[string]any {
	out := map[string]any{"verbatim": false, "query_visible_before_recall": bytes.Contains(next, []byte(JSONText(query)))}
	names, _ := filepath.Glob(filepath.Join(reqs, "request-*.json"))
	sort.Strings(names)
	for _, n := range names {
		b, _ := os.ReadFile(n)
		var req struct {
			Messages []struct {
				Role       string          `json:"role"`
				Content    json.RawMessage `json:"content"`
				ToolCallID string          `json:"tool_call_id"`
				ToolCalls  []struct {
					ID       string `json:"id"`
					Function struct {
						Name string `json:"name"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"messages"`
		}
		if json.Unmarshal(b, &req) != nil {
			continue
		}
		calls := map[string]string{}
		for _, m := range req.Messages {
			for _, c := range m.ToolCalls {
				calls[c.ID] = c.Function.Name
			}
			name := calls[m.ToolCallID]
			switch {
			case m.Role != "tool":
			case strings.HasSuffix(name, "search_history") && out["search_request"] == nil:
				out["search_request"], out["search_tool"] = filepath.Base(n), name
			case strings.HasSuffix(name, "read_turns"):
				out["read_request"], out["read_tool"] = filepath.Base(n), name
				out["verbatim"] = strings.Contains(ContentText(m.Content), query)
			}
		}
	}
	return out
}
