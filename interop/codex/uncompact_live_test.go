package codex_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/internal/fake/openai"

	"github.com/ctxfold/ctxfold/internal/hooktest"
)

// TestLiveUncompactResume is issue 39's acceptance with the real Codex: a
// session plants facts (hooktest.Planted), Codex compacts it itself (its
// compacted record, the fake's summary), and `ctxfold uncompact FILE
// --export codex` hands the whole history back as a new rollout. Resumed
// with `codex exec resume ID`, the request carries every planted fact
// verbatim and not Codex's summary; with `--recompact --keep-tokens 200`
// it carries every planted fact and ctxfold's summary instead of Codex's,
// and is smaller than the whole history. The original rollout is
// byte-identical afterwards.
func TestLiveUncompactResume(t *testing.T) {
	if os.Getenv("CTXFOLD_INTEROP_LIVE") != "1" {
		t.Skip("set CTXFOLD_INTEROP_LIVE=1 to drive the real Codex CLI " + Version)
	}
	client := codexBin(t)
	bin := hooktest.Build(t)
	tmp, _ := filepath.EvalSymlinks(t.TempDir())
	chome, work := filepath.Join(tmp, "home"), filepath.Join(tmp, "work")
	codexHome := filepath.Join(chome, ".codex")
	for _, d := range []string{codexHome, work} {
		_ = os.MkdirAll(d, 0o755)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	srv, err := openai.New("")
	if err != nil {
		t.Fatal(err)
	}
	l, err := openai.Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ctx, l)
	config := `model = "gpt-5.5"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"
model_auto_compact_token_limit = 200000

[model_providers.fake]
name = "fake"
base_url = "http://` + l.Addr().String() + `/v1"
wire_api = "responses"
env_key = "FAKE_OPENAI_KEY"
`
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+chome, "CODEX_HOME="+codexHome, "FAKE_OPENAI_KEY=dummy", "NO_COLOR=1", "XDG_CACHE_HOME="+filepath.Join(tmp, "cache"))
	run := func(args ...string) {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(c, client, append([]string{"exec", "--skip-git-repo-check"}, args...)...)
		cmd.Dir, cmd.Env, cmd.WaitDelay = work, env, 5*time.Second
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("codex %v: %v\n%s", args, err, out)
		}
	}
	run("Please migrate the session store to SQLite. Never touch /etc/ctxfold/prod.toml and keep the WAL under 64 MB " +
		"(see https://sqlite.org/wal.html). The entry point is `openStoreWithRetry` in internal/store/open_store.go.")
	run("resume", "--last", "Check the old store directory first. [[shell: ls /nonexistent-ctxfold-dir]]")
	// A long tool output among the turns Codex compacts: what a summary
	// stands in for, so a recompaction has something to fold (the turns
	// above alone are barely longer than any summary of them).
	run("resume", "--last", "Number the migration steps. [[shell: seq 1 400]]")
	run("resume", "--last", "No, actually use the flock-based lock instead of the pid file; the lock timeout is 250 ms.")
	run("resume", "--last", "Keep going. [[inflate]] [[shell: echo checkpoint-$((6*7))-reached]]")
	compacted := lastInput(t, srv, func() { run("resume", "--last", "What should I do next?") }, "What should I do next?")
	if !strings.Contains(compacted, hooktest.JSONText(openai.SummaryText)) {
		t.Fatal("the request after the prompt does not carry Codex's compaction summary: did it compact?")
	}
	before := hooktest.Measure("client", hooktest.Planted, []byte(compacted), len(compacted), nil)
	rollouts, _ := filepath.Glob(filepath.Join(codexHome, "sessions", "*", "*", "*", "rollout-*.jsonl"))
	if len(rollouts) != 1 {
		t.Fatalf("rollouts %v", rollouts)
	}
	file := rollouts[0]
	original, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	resume := func(args ...string) (string, uncompactOut) {
		t.Helper()
		cmd := exec.CommandContext(ctx, bin, append([]string{"uncompact", file, "--export", "codex", "--json"}, args...)...)
		cmd.Env = env
		var out uncompactOut
		b, err := cmd.Output()
		if err != nil || json.Unmarshal(b, &out) != nil || out.SessionID == "" {
			t.Fatalf("uncompact %v: %v\n%s", args, err, b)
		}
		question := "After the undo echo-7741 " + strings.Join(args, " ")
		return lastInput(t, srv, func() { run("resume", out.SessionID, question) }, question), out
	}
	whole, _ := resume()
	r := hooktest.Measure("uncompacted", hooktest.Planted, []byte(whole), len(whole), func(f hooktest.Fact) { t.Errorf("uncompacted: lost %s %q", f.Kind, f.Text) })
	if strings.Contains(whole, hooktest.JSONText(openai.SummaryText)) {
		t.Errorf("the uncompacted resume still sends Codex's summary")
	}
	re, out := resume("--recompact", "--keep-tokens", "200")
	rr := hooktest.Measure("recompacted", hooktest.Planted, []byte(re), len(re), func(f hooktest.Fact) { t.Errorf("recompacted: lost %s %q", f.Kind, f.Text) })
	if strings.Contains(re, hooktest.JSONText(openai.SummaryText)) || !strings.Contains(re, compactedLine(t, out.Output)) {
		t.Errorf("the recompacted resume does not send ctxfold's summary in place of Codex's")
	}
	if len(re) >= len(whole) {
		t.Errorf("the recompacted resume (%d bytes of input) is not smaller than the whole history (%d)", len(re), len(whole))
	}
	if now, _ := os.ReadFile(file); !bytes.Equal(now, original) {
		t.Errorf("the original rollout changed")
	}
	t.Logf("planted facts in the request: after Codex's compaction %d/%d (%d bytes of input); uncompacted %d/%d (%d bytes); recompacted %d/%d (%d bytes; %d of the %d facts audit found dropped kept)",
		before.KeptCount, before.Planted, len(compacted), r.KeptCount, r.Planted, len(whole), rr.KeptCount, rr.Planted, len(re),
		out.Recompact.Kept, out.Recompact.Dropped)
}

// uncompactOut is the part of uncompact FILE --export --json the test reads.
type uncompactOut struct {
	SessionID string `json:"session_id"`
	Output    string `json:"output"`
	Recompact struct {
		Dropped int `json:"client_dropped"`
		Kept    int `json:"kept_of_client_dropped"`
	} `json:"recompact"`
}

// lastInput runs a client command and returns the input of the last
// Responses request it sent that carries marker.
func lastInput(t *testing.T, srv *openai.Server, run func(), marker string) string {
	t.Helper()
	var body struct {
		Input json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal([]byte(lastRequest(t, srv, run, marker)), &body); err != nil {
		t.Fatal(err)
	}
	return string(body.Input)
}

// compactedLine is the first line of the compacted record's message in
// the rollout at path, as JSON text.
func compactedLine(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		var rec struct {
			Type    string `json:"type"`
			Payload struct {
				Message string `json:"message"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Type == "compacted" {
			first, _, _ := strings.Cut(strings.TrimSpace(rec.Payload.Message), "\n")
			return hooktest.JSONText(first)
		}
	}
	t.Fatalf("%s holds no compacted record", path)
	return ""
}
