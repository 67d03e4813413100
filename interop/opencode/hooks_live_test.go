package opencode_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/internal/fake/openai"
	"github.com/ctxfold/ctxfold/internal/hooktest"
)

// TestLiveHooks runs the acceptance of issue 42 with the real OpenCode
// (docs/HOOKS.md, "OpenCode and Kilo"): without ctxfold the client's
// summary keeps none of the planted facts; with `ctxfold setup opencode`
// the compaction request carries the fact ledger, the fake's summary —
// told to keep what the block lists — keeps it, ctxfold's audit of the
// summary finds ≥ 95% of its facts, and the request after the compaction
// carries ≥ 95% of the planted facts (hooktest.CheckLedger). With
// CTXFOLD_HOOKS_RECORD=DIR the figures go to
// DIR/opencode/<version>/figures.json (interop/opencode/hooks.sh). The two
// sessions run at once: 1.5 to 3 minutes on the loaded machine.
func TestLiveHooks(t *testing.T) { liveHooks(t, "opencode") }

// TestLiveHooksKilo is TestLiveHooks with Kilo, which takes about a
// minute a run; it runs alongside TestLiveHooksKiloInjection: the two in
// 2 to 3 minutes on the loaded machine.
func TestLiveHooksKilo(t *testing.T) {
	if os.Getenv("CTXFOLD_INTEROP_LIVE") != "" {
		t.Parallel()
	}
	liveHooks(t, "kilo")
}

func liveHooks(t *testing.T, client string) {
	if os.Getenv("CTXFOLD_INTEROP_LIVE") == "" {
		t.Skip("set CTXFOLD_INTEROP_LIVE=1 to run the hooks with the real OpenCode and Kilo")
	}
	bin := hooktest.Build(t)
	env := map[string]string{"opencode": "CTXFOLD_OPENCODE_BIN", "kilo": "CTXFOLD_KILO_BIN"}[client]
	exe := hooktest.ClientBin(t, env, client+"-"+pinned[client], client, "interop/opencode/record.sh")
	runs := make([]hooktest.LedgerRun, 2)
	start := time.Now()
	t.Run("session", func(t *testing.T) {
		for i, mode := range []string{"without", "with"} {
			t.Run(mode, func(t *testing.T) {
				t.Parallel() // the two sessions at once: half the time
				runs[i] = ledgerSession(t, client, exe, bin, mode, false)
			})
		}
	})
	if t.Failed() {
		return
	}
	t.Logf("%s: both sessions in %s", client, time.Since(start).Round(time.Second))
	hooktest.CheckLedger(t, client, runs)
	if rec := runs[1].Recall; rec["verbatim"] != true || rec["query_visible_before_recall"] != false {
		t.Errorf("%s recall: the read_turns result the client sent back does not carry the covered turn verbatim: %v", client, rec)
	}
	if runs[1].Recall != nil {
		t.Logf("%s recall: %v", client, runs[1].Recall)
	}
	hooktest.RecordLedger(t, client, exe, runs)
}

// recallQuery is text only a folded turn holds: the fake's reply to the
// first run's tool call (assistant text is no fact, so the ledger does not
// list it and the summary does not keep it).
const recallQuery = "Done: 1 tool output(s) read."

// TestLiveHooksInjection is OpenCode's session with ctxfold whose
// summariser drops the ledger too (the fake's IgnoreKeep): the compaction
// request carries the ledger, the summary keeps none of it, and the
// plugin's chat.message adds what the hook's audit finds dropped to the
// next prompt, which then carries ≥ 95% of the planted facts. About 1.5
// minutes.
func TestLiveHooksInjection(t *testing.T) { liveInjection(t, "opencode") }

// TestLiveHooksKiloInjection is TestLiveHooksInjection with Kilo, which
// compacts when the next prompt arrives, after that prompt's chat.message
// ran: the plugin adds the injection to the first request after the
// compaction (experimental.chat.messages.transform). One more prompt, in
// a new run of the client, shows what the request after that carries
// (Later): the plugin stores the part it added. Runs alongside
// TestLiveHooksKilo.
func TestLiveHooksKiloInjection(t *testing.T) {
	if os.Getenv("CTXFOLD_INTEROP_LIVE") != "" {
		t.Parallel()
	}
	liveInjection(t, "kilo")
}

func liveInjection(t *testing.T, client string) {
	if os.Getenv("CTXFOLD_INTEROP_LIVE") == "" {
		t.Skip("set CTXFOLD_INTEROP_LIVE=1 to run the hooks with the real OpenCode and Kilo")
	}
	bin := hooktest.Build(t)
	env := map[string]string{"opencode": "CTXFOLD_OPENCODE_BIN", "kilo": "CTXFOLD_KILO_BIN"}[client]
	exe := hooktest.ClientBin(t, env, client+"-"+pinned[client], client, "interop/opencode/record.sh")
	r := ledgerSession(t, client, exe, bin, "with", true)
	t.Logf("%s, summary without the ledger: %d of %d planted facts in the request after the compaction (%.0f%%); audit %.1f%% of %d facts; injection %s",
		client, r.KeptCount, r.Planted, r.SurvivalPct, r.AuditSurvivalPct, r.AuditFacts, r.Injection)
	if r.Later != nil {
		t.Logf("%s: the request of the prompt after (a new run): %d of %d planted facts", client, r.Later.KeptCount, r.Later.Planted)
		if r.Later.SurvivalPct < 95 { // the plugin stores the part it added
			t.Errorf("only %.0f%% of the planted facts reach the model at the prompt after", r.Later.SurvivalPct)
		}
	}
	if !r.LedgerInRequest {
		t.Error("the compaction request carries no ledger")
	}
	if r.SurvivalPct < 95 {
		t.Errorf("only %.0f%% of the planted facts reach the model after the compaction", r.SurvivalPct)
	}
	var inj []struct{ Missing, Shown, Tokens int }
	if json.Unmarshal(r.Injection, &inj) != nil || len(inj) != 1 || inj[0].Missing == 0 || inj[0].Shown == 0 || inj[0].Tokens == 0 {
		t.Errorf("no injection recorded: %s", r.Injection)
	}
	if dir := os.Getenv("CTXFOLD_HOOKS_RECORD"); dir != "" {
		out := filepath.Join(dir, client, hooktest.ClientVersion(exe))
		_ = os.MkdirAll(out, 0o755)
		if err := hooktest.WriteJSON(filepath.Join(out, "injection.json"), r); err != nil {
			t.Fatal(err)
		}
	}
}

// laterPrompt is the prompt after NextPrompt in Kilo's injection session.
const laterPrompt = "And after that?"

// ledgerSession drives one session: the planted turns, the client's
// automatic compaction, the next prompt.
func ledgerSession(t *testing.T, client, exe, bin, mode string, ignoreKeep bool) hooktest.LedgerRun {
	t.Helper()
	tmp, _ := filepath.EvalSymlinks(t.TempDir())
	home, work, reqs := filepath.Join(tmp, "home"), filepath.Join(tmp, "work"), filepath.Join(tmp, "requests")
	cfgDir := filepath.Join(home, ".config", client)
	for _, d := range []string{cfgDir, work} {
		_ = os.MkdirAll(d, 0o755)
	}
	url := hooktest.StartOpenAIWith(t, reqs, ignoreKeep)
	// As record.sh's config, the command outside the project allowed.
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
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "OPENCODE_DISABLE_MODELS_FETCH=1", "NO_COLOR=1",
		// Kilo's own services, which the fake session has no use for and
		// which cost it tens of seconds a run here (no network).
		"KILO_DISABLE_MODELS_FETCH=1", "KILO_DISABLE_SESSION_INGEST=1", "KILO_DISABLE_CODEBASE_INDEXING=1", "KILO_TELEMETRY_LEVEL=off"}
	if mode == "with" {
		setup := exec.Command(bin, "setup", client, "--command", bin)
		setup.Env = env
		if out, err := setup.CombinedOutput(); err != nil {
			t.Fatalf("setup: %v\n%s", err, out)
		}
	}
	prompts := append(append([]string(nil), hooktest.LedgerTurns...), hooktest.NextPrompt)
	if ignoreKeep && client == "kilo" {
		prompts = append(prompts, laterPrompt)
	}
	if mode == "with" && !ignoreKeep {
		prompts = append(prompts, "Find what you said about the old store. "+openai.MarkerRecall+" "+recallQuery+"]]")
	}
	for i, p := range prompts {
		args := []string{"run", "-m", "fake/fake-model"}
		if i > 0 {
			args = append(args, "-c")
		}
		// Kilo takes a minute a run here, more under load.
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		c := exec.CommandContext(ctx, exe, append(args, p)...)
		c.Dir, c.Env = work, env
		out, err := c.CombinedOutput()
		cancel()
		if err != nil {
			last, _ := filepath.Glob(filepath.Join(reqs, "request-*.json"))
			var req []byte
			if len(last) > 0 {
				req, _ = os.ReadFile(last[len(last)-1])
			}
			t.Fatalf("%s %s turn %d: %v\n%s\nthe last request: %s", client, mode, i+1, err, tail(out, 2000), tail(req, 3000))
		}
	}
	isSummary := func(s string) bool { return strings.Contains(s, openai.OpenCodeCompactionCue) }
	summarize, next := hooktest.CompactionAndNext(t, reqs, isSummary, hooktest.NextPrompt)
	r := hooktest.MeasureLedger(t, client, mode, summarize, next, home)
	if ignoreKeep && client == "kilo" {
		_, later := hooktest.CompactionAndNext(t, reqs, isSummary, laterPrompt)
		run := hooktest.Measure("later", hooktest.Planted, later, len(later), func(hooktest.Fact) {})
		r.Later = &run
	}
	if mode == "with" && !ignoreKeep {
		r.Recall = hooktest.ChatRecall(reqs, recallQuery, next)
	}
	// The client's database, read as its most recently active session:
	// this test's one.
	r.AuditSurvivalPct, r.AuditFacts = hooktest.Audit(t, bin, home, filepath.Join(home, ".local", "share", client, client+".db"))
	return r
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return fmt.Sprintf("…%s", b)
}
