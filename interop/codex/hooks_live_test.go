package codex_test

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
)

// codexPlanted are the facts the scripted Codex session plants, as in
// interop/claude-code's TestLiveHooks (docs/HOOKS.md).
var codexPlanted = []struct{ Kind, Text string }{
	{"request", "Please migrate the session store to SQLite"},
	{"instruction", "Never touch /etc/ctxfold/prod.toml"},
	{"instruction", "keep the WAL under 64 MB"},
	{"path", "internal/store/open_store.go"},
	{"identifier", "openStoreWithRetry"},
	{"url", "https://sqlite.org/wal.html"},
	{"command", "ls /nonexistent-ctxfold-dir"},
	{"error", "No such file or directory"},
	{"correction", "use the flock-based lock instead of the pid file"},
	{"number", "250 ms"},
}

// TestLiveHooks measures what reaches the model after Codex's own
// automatic compaction (model_auto_compact_token_limit, the fake reporting
// an inflated usage), without and with ctxfold installed by
// 'ctxfold setup codex'. Codex runs untrusted hooks only with
// --dangerously-bypass-hook-trust, which the "with" run passes (a user
// trusts them once, interactively). CTXFOLD_CODEX_BIN picks another client;
// CTXFOLD_HOOKS_RECORD=DIR writes what Codex sent to the hooks under DIR
// (testdata/hook/codex/<version>/).
func TestLiveHooks(t *testing.T) {
	if os.Getenv("CTXFOLD_INTEROP_LIVE") != "1" {
		t.Skip("set CTXFOLD_INTEROP_LIVE=1 to drive the real Codex CLI " + Version)
	}
	client := os.Getenv("CTXFOLD_CODEX_BIN")
	if client == "" {
		home, _ := os.UserHomeDir()
		client = filepath.Join(home, ".cache", "ctxfold-interop", "codex-"+Version, "node_modules", ".bin", "codex")
	}
	bin := filepath.Join(t.TempDir(), "ctxfold")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/ctxfold/ctxfold").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	survival := map[string]float64{}
	for _, mode := range []string{"without", "with"} {
		kept, total, size, injected := codexHooksRun(t, client, bin, mode)
		survival[mode] = float64(kept*1000/total) / 10
		t.Logf("codex %s ctxfold: %d of %d planted facts in the request after the compaction (%.0f%%), request %d bytes%s",
			mode, kept, total, survival[mode], size, injected)
	}
	if survival["with"] < 95 {
		t.Errorf("with ctxfold only %.0f%% of the planted facts survive Codex's compaction", survival["with"])
	}
}

func codexHooksRun(t *testing.T, client, bin, mode string) (kept, total, size int, injected string) {
	t.Helper()
	tmp, _ := filepath.EvalSymlinks(t.TempDir())
	chome, work := filepath.Join(tmp, "home"), filepath.Join(tmp, "work")
	codexHome := filepath.Join(chome, ".codex")
	for _, d := range []string{codexHome, work} {
		_ = os.MkdirAll(d, 0o755)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
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
	env := append(os.Environ(), "HOME="+chome, "CODEX_HOME="+codexHome, "FAKE_OPENAI_KEY=dummy", "NO_COLOR=1", "XDG_CACHE_HOME=")
	extra := []string{}
	if mode == "with" {
		setup := exec.Command(bin, "setup", "codex", "--command", bin)
		setup.Env = env
		if out, err := setup.CombinedOutput(); err != nil {
			t.Fatalf("setup codex: %v\n%s", err, out)
		}
		extra = []string{"--dangerously-bypass-hook-trust"}
		if dir := os.Getenv("CTXFOLD_HOOKS_RECORD"); dir != "" {
			teeHooks(t, codexHome, filepath.Join(tmp, "inputs"))
			defer saveInputs(t, filepath.Join(tmp, "inputs"), filepath.Join(dir, "hook-inputs"), tmp)
		}
	}
	run := func(args ...string) {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(c, client, append(append([]string{"exec", "--skip-git-repo-check"}, extra...), args...)...)
		cmd.Dir, cmd.Env, cmd.WaitDelay = work, env, 5*time.Second
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("codex %v: %v\n%s", args, err, out)
		}
	}
	run("Please migrate the session store to SQLite. Never touch /etc/ctxfold/prod.toml and keep the WAL under 64 MB " +
		"(see https://sqlite.org/wal.html). The entry point is `openStoreWithRetry` in internal/store/open_store.go.")
	run("resume", "--last", "Check the old store directory first. [[shell: ls /nonexistent-ctxfold-dir]]")
	run("resume", "--last", "No, actually use the flock-based lock instead of the pid file; the lock timeout is 250 ms.")
	run("resume", "--last", "Keep going. [[inflate]] [[shell: echo checkpoint-soon]]")
	before := len(srv.Requests())
	run("resume", "--last", "What should I do next?")
	var req []byte
	for _, r := range srv.Requests()[before:] {
		if strings.HasSuffix(r.Path, "/responses") && bytes.Contains(r.Body, []byte("What should I do next?")) {
			req = r.Body
		}
	}
	if req == nil {
		t.Fatal("no request for the prompt after the compaction")
	}
	if !bytes.Contains(req, []byte(openai.SummaryText)) {
		t.Fatalf("%s: the request after the prompt does not carry Codex's compaction summary: did it compact?", mode)
	}
	var body struct {
		Input json.RawMessage `json:"input"`
	}
	_ = json.Unmarshal(req, &body)
	for _, f := range codexPlanted {
		b, _ := json.Marshal(f.Text)
		if bytes.Contains(body.Input, b[1:len(b)-1]) {
			kept++
		} else {
			t.Logf("%s: lost %s %q", mode, f.Kind, f.Text)
		}
	}
	if mode == "with" {
		log, _ := os.ReadFile(filepath.Join(chome, ".cache", "ctxfold", "hook.log"))
		injected = "; hook.log: " + strings.TrimSpace(string(log))
	}
	return kept, len(codexPlanted), len(req), injected
}

// teeHooks adds, beside ctxfold's, a hook that copies every hook input.
func teeHooks(t *testing.T, codexHome, inputs string) {
	t.Helper()
	_ = os.MkdirAll(inputs, 0o755)
	script := filepath.Join(inputs, "..", "tee-hook.sh")
	_ = os.WriteFile(script, []byte("#!/bin/sh\ncat > \""+inputs+"/$(date +%s%N).json\"\n"), 0o755)
	path := filepath.Join(codexHome, "hooks.json")
	b, _ := os.ReadFile(path)
	var doc struct {
		Hooks map[string][]any `json:"hooks"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for ev := range doc.Hooks {
		doc.Hooks[ev] = append(doc.Hooks[ev], map[string]any{"hooks": []any{map[string]any{"type": "command", "command": script}}})
	}
	b, _ = json.Marshal(doc)
	_ = os.WriteFile(path, b, 0o644)
}

// saveInputs writes the recorded hook inputs in order, with the temporary
// directory, ids and dates of the rollout path normalised.
func saveInputs(t *testing.T, from, to, tmp string) {
	_ = os.RemoveAll(to)
	_ = os.MkdirAll(to, 0o755)
	es, _ := os.ReadDir(from)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	for i, n := range names {
		b, _ := os.ReadFile(filepath.Join(from, n))
		var v map[string]any
		if json.Unmarshal(bytes.ReplaceAll(b, []byte(tmp), []byte("/interop")), &v) != nil {
			continue
		}
		for _, k := range []string{"session_id", "turn_id"} {
			if _, ok := v[k]; ok {
				v[k] = "<" + k + ">"
			}
		}
		if p, ok := v["transcript_path"].(string); ok {
			if i := strings.Index(p, "/sessions/"); i >= 0 {
				v["transcript_path"] = p[:i] + "/sessions/YYYY/MM/DD/rollout-<session_id>.jsonl"
			}
		}
		var out bytes.Buffer
		enc := json.NewEncoder(&out)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		_ = enc.Encode(v)
		_ = os.WriteFile(filepath.Join(to, fmt.Sprintf("%02d-%s.json", i+1, v["hook_event_name"])), out.Bytes(), 0o644)
	}
}
