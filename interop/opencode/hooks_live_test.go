package opencode_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/internal/fake/openai"
	"github.com/ctxfold/ctxfold/internal/hooktest"
)

// hookTurns plant hooktest.Planted: the command and its error only in a
// tool call and its output.
// Two runs of the client, to keep the test short: each client run takes
// tens of seconds on a loaded machine.
var hookTurns = []string{
	"Please migrate the session store to SQLite. Never touch /etc/ctxfold/prod.toml and keep the WAL under 64 MB " +
		"(see https://sqlite.org/wal.html). The entry point is `openStoreWithRetry` in internal/store/open_store.go. " +
		"Check the old store directory first. [[shell: ls /nonexistent-ctxfold-dir]]",
	// The fake reports more input tokens than the model's window: the
	// client compacts on its own once the turn ends (automatic, as
	// record.sh's compaction scenario).
	"No, actually use the flock-based lock instead of the pid file; the lock timeout is 250 ms. [[inflate]]",
}

const nextPrompt = "What should I do next?"

// ledgerRun is one session's figures beyond hooktest.Run's: what the
// compaction request carried and what ctxfold's audit of the summary found.
type ledgerRun struct {
	hooktest.Run
	// LedgerInRequest: the summariser's request held the keep block;
	// PlantedInLedger how many planted facts it listed.
	LedgerInRequest bool `json:"ledger_in_request"`
	PlantedInLedger int  `json:"planted_in_ledger"`
	// Ledger is the hook state's record of the ledger (tokens counted by
	// estimate); AuditSurvivalPct the survival `ctxfold audit` reports for
	// the client's summary.
	Ledger           json.RawMessage `json:"ledger,omitempty"`
	AuditSurvivalPct float64         `json:"audit_survival_pct"`
	AuditFacts       int             `json:"audit_facts"`
}

// TestLiveHooks runs the acceptance of issue 42 with the real OpenCode and
// Kilo (docs/HOOKS.md, "OpenCode and Kilo"): without ctxfold the client's
// summary keeps none of the planted facts; with `ctxfold setup`, the
// compaction request carries the fact ledger, the fake's summary — told to
// keep what the block lists — keeps it, ctxfold's audit of the summary
// finds ≥ 95% of its facts, and the request after the compaction carries
// ≥ 95% of the planted facts. With CTXFOLD_HOOKS_RECORD=DIR the figures go
// to DIR/<client>/figures.json (interop/opencode/hooks.sh).
func TestLiveHooks(t *testing.T) {
	if os.Getenv("CTXFOLD_INTEROP_LIVE") == "" {
		t.Skip("set CTXFOLD_INTEROP_LIVE=1 to run the hooks with the real OpenCode and Kilo")
	}
	bin := hooktest.Build(t)
	for _, client := range []string{"opencode", "kilo"} {
		t.Run(client, func(t *testing.T) {
			exe := liveBin(t, client)
			runs := make([]ledgerRun, 2)
			start := time.Now()
			t.Run("session", func(t *testing.T) {
				for i, mode := range []string{"without", "with"} {
					t.Run(mode, func(t *testing.T) {
						t.Parallel() // the two sessions at once: half the time
						runs[i] = ledgerSession(t, client, exe, bin, mode)
					})
				}
			})
			if t.Failed() {
				return
			}
			t.Logf("%s: both sessions in %s", client, time.Since(start).Round(time.Second))
			for _, r := range runs {
				t.Logf("%s %s ctxfold: %d of %d planted facts in the request after the compaction (%.0f%%); ledger in the compaction request: %v (%d planted facts); audit %.1f%% of %d facts",
					client, r.Mode, r.KeptCount, r.Planted, r.SurvivalPct, r.LedgerInRequest, r.PlantedInLedger, r.AuditSurvivalPct, r.AuditFacts)
			}
			without, with := runs[0], runs[1]
			if !with.LedgerInRequest || with.PlantedInLedger < len(hooktest.Planted)*95/100 {
				t.Errorf("the compaction request carries the ledger %v with %d of %d planted facts", with.LedgerInRequest, with.PlantedInLedger, len(hooktest.Planted))
			}
			if with.AuditSurvivalPct < 95 {
				t.Errorf("ctxfold's audit of the client's summary: %.1f%% of %d facts survive", with.AuditSurvivalPct, with.AuditFacts)
			}
			if with.SurvivalPct < 95 || without.SurvivalPct >= with.SurvivalPct {
				t.Errorf("planted facts after the compaction: %.0f%% with ctxfold, %.0f%% without", with.SurvivalPct, without.SurvivalPct)
			}
			if without.LedgerInRequest {
				t.Errorf("the control's compaction request holds a ledger")
			}
			if dir := os.Getenv("CTXFOLD_HOOKS_RECORD"); dir != "" {
				doc := map[string]any{"client": client, "version": hooktest.ClientVersion(exe), "runs": runs}
				_ = os.MkdirAll(filepath.Join(dir, client), 0o755)
				if err := hooktest.WriteJSON(filepath.Join(dir, client, "figures.json"), doc); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// liveBin is the client the test drives (CTXFOLD_OPENCODE_BIN /
// CTXFOLD_KILO_BIN, else the pinned one record.sh installs).
func liveBin(t *testing.T, client string) string {
	env := map[string]string{"opencode": "CTXFOLD_OPENCODE_BIN", "kilo": "CTXFOLD_KILO_BIN"}[client]
	name := map[string]string{"opencode": "opencode", "kilo": "kilo"}[client]
	return hooktest.ClientBin(t, env, client+"-"+pinned[client], name, "interop/opencode/record.sh")
}

// ledgerSession drives one session: the planted turns, the automatic
// compaction, the next prompt.
func ledgerSession(t *testing.T, client, exe, bin, mode string) ledgerRun {
	t.Helper()
	tmp, _ := filepath.EvalSymlinks(t.TempDir())
	home, work, reqs := filepath.Join(tmp, "home"), filepath.Join(tmp, "work"), filepath.Join(tmp, "requests")
	cfgDir := filepath.Join(home, ".config", client)
	for _, d := range []string{cfgDir, work} {
		_ = os.MkdirAll(d, 0o755)
	}
	url := startFake(t, reqs)
	config := map[string]any{"autoupdate": false, "share": "disabled",
		"permission": map[string]any{"bash": "allow", "external_directory": "allow"},
		"provider": map[string]any{"fake": map[string]any{"npm": "@ai-sdk/openai-compatible", "name": "Fake",
			"options": map[string]any{"baseURL": url, "apiKey": "fake-interop-key"},
			"models":  map[string]any{"fake-model": map[string]any{"name": "Fake Model", "limit": map[string]any{"context": 200000, "output": 8000}}}}},
		"model": "fake/fake-model", "small_model": "fake/fake-model"}
	b, _ := json.Marshal(config)
	if err := os.WriteFile(filepath.Join(cfgDir, client+".json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "OPENCODE_DISABLE_MODELS_FETCH=1", "NO_COLOR=1"}
	if mode == "with" {
		setup := exec.Command(bin, "setup", client, "--command", bin)
		setup.Env = env
		if out, err := setup.CombinedOutput(); err != nil {
			t.Fatalf("setup: %v\n%s", err, out)
		}
	}
	for i, p := range append(append([]string(nil), hookTurns...), nextPrompt) {
		args := []string{"run", "-m", "fake/fake-model"}
		if i > 0 {
			args = append(args, "-c")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		c := exec.CommandContext(ctx, exe, append(args, p)...)
		c.Dir, c.Env = work, env
		out, err := c.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("%s %s turn %d: %v\n%s", client, mode, i+1, err, tail(out, 2000))
		}
	}
	r := ledgerRun{}
	summarize, next := compactionAndNext(t, reqs)
	r.Run = hooktest.Measure(mode, hooktest.Planted, next, len(next), func(f hooktest.Fact) { t.Logf("%s %s: lost %s: %s", client, mode, f.Kind, f.Text) })
	block := keepBlock(summarize)
	r.LedgerInRequest = block != ""
	for _, f := range hooktest.Planted {
		if strings.Contains(block, f.Text) {
			r.PlantedInLedger++
		}
	}
	if mode == "with" {
		r.Ledger = stateField(home, "ledger")
		r.Injection = stateField(home, "injected")
	}
	r.AuditSurvivalPct, r.AuditFacts = auditSummary(t, bin, home, client)
	return r
}

// startFake serves the fake OpenAI provider on loopback until the test
// ends and returns its base URL.
func startFake(t *testing.T, reqs string) string {
	t.Helper()
	srv, err := openai.New(reqs)
	if err != nil {
		t.Fatal(err)
	}
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

// compactionAndNext are the summariser's request (its last user message's
// text) and the conversation of the request that answers nextPrompt.
func compactionAndNext(t *testing.T, reqs string) (summarize string, next []byte) {
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
		text := contentText(last.Content)
		switch {
		case strings.Contains(text, openai.OpenCodeCompactionCue):
			summarize = text
		case last.Role == "user" && strings.Contains(text, nextPrompt) && next == nil:
			msgs, _ := json.Marshal(req.Messages)
			next = msgs
		}
	}
	if summarize == "" || next == nil {
		t.Fatalf("%s: no compaction request (%v) or no request after it (%v)", reqs, summarize != "", next != nil)
	}
	return summarize, next
}

// contentText is a chat message's content as text (a string, or the text
// of its parts).
func contentText(raw json.RawMessage) string {
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

// keepBlock is the text between the ledger's keep lines ("" none).
func keepBlock(text string) string {
	i := strings.Index(text, "\n<ctxfold-keep>\n")
	j := strings.Index(text, "\n</ctxfold-keep>")
	if i < 0 || j < i {
		return ""
	}
	return text[i+len("\n<ctxfold-keep>\n") : j]
}

// stateField is one field of the hook state ctxfold keeps for the session
// (home/.cache/ctxfold/hook/*.json), its time taken out.
func stateField(home, field string) json.RawMessage {
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

// auditSummary runs `ctxfold audit` on the client's database (its most
// recently active session: the test's one) and returns the survival of
// the active summary's facts.
func auditSummary(t *testing.T, bin, home, client string) (float64, int) {
	t.Helper()
	db := filepath.Join(home, ".local", "share", client, client+".db")
	c := exec.Command(bin, "audit", db, "--json")
	c.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	out, err := c.Output()
	if err != nil {
		t.Fatalf("ctxfold audit %s: %v\n%s", db, err, out)
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

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return fmt.Sprintf("…%s", b)
}
