package pi_test

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

// TestLiveHooks runs issue 42's acceptance with the real pi (docs/HOOKS.md,
// "pi"): without ctxfold pi's summary keeps none of the planted facts;
// with `ctxfold setup pi` the compaction request carries the fact ledger,
// the fake's summary — told to keep what the block lists — keeps it,
// ctxfold's audit of the summary finds ≥ 95% of its facts, and the request
// after the compaction carries ≥ 95% of the planted facts
// (hooktest.CheckLedger). With CTXFOLD_HOOKS_RECORD=DIR the figures go to
// DIR/pi/<version>/figures.json (interop/pi/hooks.sh).
func TestLiveHooks(t *testing.T) {
	if os.Getenv("CTXFOLD_INTEROP_LIVE") != "1" {
		t.Skip("set CTXFOLD_INTEROP_LIVE=1 to run the hooks with the real pi " + Version)
	}
	bin := hooktest.Build(t)
	exe := hooktest.ClientBin(t, "CTXFOLD_PI_BIN", "pi-"+Version, "pi", "interop/pi/record.sh")
	runs := make([]hooktest.LedgerRun, 2)
	start := time.Now()
	t.Run("session", func(t *testing.T) {
		for i, mode := range []string{"without", "with"} {
			t.Run(mode, func(t *testing.T) {
				t.Parallel() // the two sessions at once: half the time
				runs[i] = ledgerSession(t, exe, bin, mode, false)
			})
		}
	})
	if t.Failed() {
		return
	}
	t.Logf("pi: both sessions in %s", time.Since(start).Round(time.Second))
	hooktest.CheckLedger(t, "pi", runs)
	if rec := runs[1].Recall; rec["verbatim"] != true || rec["query_visible_before_recall"] != false {
		t.Errorf("pi recall: the ctxfold_read_turns result pi sent back does not carry the covered turn verbatim: %v", rec)
	}
	t.Logf("pi recall: %v", runs[1].Recall)
	hooktest.RecordLedger(t, "pi", exe, runs)
}

// recallQuery is text only a folded turn holds: the fake's reply to the
// first run's tool call (assistant text is no fact: neither the ledger nor
// the summary holds it).
const recallQuery = "Done: 1 tool output(s) read."

// TestLiveHooksInjection is pi's session with ctxfold whose summariser
// drops the ledger too (the fake's IgnoreKeep): pi's summary keeps none of
// it, and the extension's before_agent_start adds what the hook's audit
// finds dropped as a message of its own, so the next request carries ≥ 95%
// of the planted facts.
func TestLiveHooksInjection(t *testing.T) {
	if os.Getenv("CTXFOLD_INTEROP_LIVE") != "1" {
		t.Skip("set CTXFOLD_INTEROP_LIVE=1 to run the hooks with the real pi " + Version)
	}
	bin := hooktest.Build(t)
	exe := hooktest.ClientBin(t, "CTXFOLD_PI_BIN", "pi-"+Version, "pi", "interop/pi/record.sh")
	r := ledgerSession(t, exe, bin, "with", true)
	t.Logf("pi, summary without the ledger: %d of %d planted facts in the request after the compaction (%.0f%%); audit %.1f%% of %d facts; injection %s",
		r.KeptCount, r.Planted, r.SurvivalPct, r.AuditSurvivalPct, r.AuditFacts, r.Injection)
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
		out := filepath.Join(dir, "pi", Version)
		_ = os.MkdirAll(out, 0o755)
		if err := hooktest.WriteJSON(filepath.Join(out, "injection.json"), r); err != nil {
			t.Fatal(err)
		}
	}
}

// ledgerSession drives one session: the planted turns, pi's automatic
// compaction, the next prompt.
func ledgerSession(t *testing.T, exe, bin, mode string, ignoreKeep bool) hooktest.LedgerRun {
	t.Helper()
	tmp, _ := filepath.EvalSymlinks(t.TempDir())
	home, work, reqs := filepath.Join(tmp, "home"), filepath.Join(tmp, "work"), filepath.Join(tmp, "requests")
	agent := filepath.Join(home, ".pi", "agent")
	for _, d := range []string{agent, work} {
		_ = os.MkdirAll(d, 0o755)
	}
	url := hooktest.StartOpenAIWith(t, reqs, ignoreKeep)
	// As record.sh's compaction scenario: the fake as an OpenAI provider,
	// a small kept tail.
	models := fmt.Sprintf(`{"providers":{"fake":{"baseUrl":%q,"api":"openai-completions","apiKey":"dummy",
"compat":{"supportsDeveloperRole":false,"supportsReasoningEffort":false},
"models":[{"id":"gpt-5.4","contextWindow":128000,"maxTokens":100}]}}}`, url)
	_ = os.WriteFile(filepath.Join(agent, "models.json"), []byte(models), 0o644)
	_ = os.WriteFile(filepath.Join(agent, "settings.json"), []byte(`{"compaction":{"keepRecentTokens":20,"reserveTokens":16384}}`), 0o644)
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "PI_OFFLINE=1", "NO_COLOR=1"}
	if mode == "with" {
		setup := exec.Command(bin, "setup", "pi", "--command", bin)
		setup.Env = env
		if out, err := setup.CombinedOutput(); err != nil {
			t.Fatalf("setup: %v\n%s", err, out)
		}
	}
	prompts := append(append([]string(nil), hooktest.LedgerTurns...), hooktest.NextPrompt)
	if mode == "with" && !ignoreKeep {
		prompts = append(prompts, "Find what you said about the old store. "+openai.MarkerRecall+" "+recallQuery+"]]")
	}
	for i, p := range prompts {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		c := exec.CommandContext(ctx, exe, "-p", "-c", "--provider", "fake", "--model", "gpt-5.4", p)
		c.Dir, c.Env = work, env
		out, err := c.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("pi %s turn %d: %v\n%s", mode, i+1, err, out)
		}
	}
	isSummary := func(s string) bool {
		return strings.Contains(s, openai.PiCompactionCue) || strings.Contains(s, "<previous-summary>")
	}
	summarize, next := hooktest.CompactionAndNext(t, reqs, isSummary, hooktest.NextPrompt)
	r := hooktest.MeasureLedger(t, "pi", mode, summarize, next, home)
	if mode == "with" && !ignoreKeep {
		r.Recall = hooktest.ChatRecall(reqs, recallQuery, next)
	}
	files, _ := filepath.Glob(filepath.Join(agent, "sessions", "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("%d session files", len(files))
	}
	r.AuditSurvivalPct, r.AuditFacts = hooktest.Audit(t, bin, home, files[0])
	return r
}
