package claudecodeinterop

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
	"time"

	"github.com/ctxfold/ctxfold/internal/fake/anthropic"

	"github.com/ctxfold/ctxfold/internal/hooktest"
)

var hookTurns = []string{
	"Please migrate the session store to SQLite. Never touch /etc/ctxfold/prod.toml and keep the WAL under 64 MB " +
		"(see https://sqlite.org/wal.html). The entry point is `openStoreWithRetry` in internal/store/open_store.go.",
	"Check the old store directory first. [[bash:ls /nonexistent-ctxfold-dir]]",
	"No, actually use the flock-based lock instead of the pid file; the lock timeout is 250 ms.",
}

const nextPrompt = "What should I do next?"

// recallQuery is text only a covered turn holds: the fake's reply to the
// first turn (assistant text is no fact, so the hook does not inject it;
// Claude Code keeps only the last reply verbatim after its summary).
const recallQuery = "Fake reply to: Please migrate the session"

// TestLiveHooks is the headline measurement of docs/HOOKS.md. With
// CTXFOLD_HOOKS_RECORD=DIR it writes the figures and what the hooks
// received there (interop/claude-code/hooks.sh commits them under
// testdata/hook/claude-code/<version>/).
func TestLiveHooks(t *testing.T) {
	client := liveClient(t)
	bin := hooktest.Build(t)
	runs, recall := hooktest.Acceptance(t, "Claude Code", "after /compact", func(mode string) (hooktest.Run, map[string]any) {
		return hooksRun(t, client, bin, mode)
	})
	hooktest.RecordFigures(t, "claude-code", client, runs, recall)
}

// hooksRun drives one session; with ctxfold it also runs the recall.
func hooksRun(t *testing.T, client, bin, mode string) (hooktest.Run, map[string]any) {
	t.Helper()
	tmp, _ := filepath.EvalSymlinks(t.TempDir())
	home, work, reqs := filepath.Join(tmp, "home"), filepath.Join(tmp, "work"), filepath.Join(tmp, "requests")
	inputs := filepath.Join(tmp, "hook-inputs")
	for _, d := range []string{home, work, inputs} {
		_ = os.MkdirAll(d, 0o755)
	}
	srv, err := anthropic.Start(anthropic.Options{RecordDir: reqs})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if mode == "with" {
		setup := exec.Command(bin, "setup", "claude-code", "--command", bin)
		setup.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
		if out, err := setup.CombinedOutput(); err != nil {
			t.Fatalf("setup: %v\n%s", err, out)
		}
		// A project-level hook beside ctxfold's records what the client
		// sends to every hook (docs/HOOKS.md, "What Claude Code sends").
		recordHooks(t, work, inputs)
	}
	cfg := Config{Client: client, StepTimeout: 3 * time.Minute, Log: testLog{t}}
	mcpAllowed := []string{"--allowedTools", "mcp__ctxfold__search_history,mcp__ctxfold__read_turns"}
	steps := []Step{printStep(hookTurns[0], "--session-id", sessA)}
	for _, p := range hookTurns[1:] {
		steps = append(steps, printStep(p, "--resume", sessA))
	}
	steps = append(steps, printStep("/compact", "--resume", sessA), printStep(nextPrompt, "--resume", sessA))
	if mode == "with" {
		steps = append(steps, printStep("Find what you said about the lock. [[recall:"+recallQuery+"]]", append([]string{"--resume", sessA}, mcpAllowed...)...))
	}
	ctx := context.Background()
	for i, st := range steps {
		if err := runStep(ctx, cfg, srv.URL, home, work, st); err != nil {
			t.Fatalf("%s step %d: %v", mode, i+1, err)
		}
	}
	next := mainRequest(t, reqs, 0, hooktest.JSONText(nextPrompt))
	msgs := messagesOnly(t, next)
	r := hooktest.Measure(mode, hooktest.Planted, []byte(msgs), len(next), nil)
	if mode != "with" {
		return r, nil
	}
	r.Injection = hooktest.Injection(home)
	r.Context = strings.ReplaceAll(strings.ReplaceAll(injectedContext(msgs), tmp, "/interop"), slug(tmp), "-interop")
	if dir := os.Getenv("CTXFOLD_HOOKS_RECORD"); dir != "" {
		if err := hooktest.SaveInputs(inputs, filepath.Join(dir, "hook-inputs"), strings.NewReplacer(tmp, "/interop", slug(tmp), "-interop"),
			func(v map[string]any) { hooktest.Placeholders(v, "prompt_id", "session_id") }); err != nil {
			t.Fatal(err)
		}
	}
	rec := recallResult(t, reqs)
	rec["query_visible_before_recall"] = strings.Contains(msgs, hooktest.JSONText(recallQuery))
	if i := strings.Index(msgs, hooktest.JSONText(recallQuery)); i >= 0 {
		t.Logf("the recall query is visible before the recall: …%s…", msgs[max(0, i-600):min(len(msgs), i+200)])
	}
	return r, rec
}

// messagesOnly is the request's messages array as JSON text (what the
// conversation carries, not the system prompt or tool definitions).
func messagesOnly(t *testing.T, body string) string {
	t.Helper()
	var req struct {
		Messages json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	return string(req.Messages)
}

// injectedContext cuts ctxfold's lines out of the request's JSON text.
func injectedContext(msgs string) string {
	i := strings.Index(msgs, "ctxfold: ")
	if i < 0 {
		return ""
	}
	end := strings.Index(msgs[i:], `"`)
	var s string
	_ = json.Unmarshal([]byte(`"`+msgs[i:i+end]+`"`), &s)
	return s
}

// recallResult finds the request that answers read_turns and checks that
// its tool result carries the covered turn verbatim.
func recallResult(t *testing.T, reqs string) map[string]any {
	t.Helper()
	es, _ := os.ReadDir(reqs)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	out := map[string]any{"verbatim": false}
	for _, n := range names {
		b, _ := os.ReadFile(filepath.Join(reqs, n))
		var req anthropic.Request
		if json.Unmarshal(b, &req) != nil || len(req.Messages) < 2 {
			continue
		}
		last := req.Messages[len(req.Messages)-1]
		for _, blk := range last.Blocks() {
			if blk.Type != "tool_result" {
				continue
			}
			if bytes.Contains(blk.Content, []byte("covered_by")) && bytes.Contains(blk.Content, []byte("hits")) && out["search_request"] == nil {
				out["search_request"] = n
			}
			if bytes.Contains(blk.Content, []byte(`turns`)) && bytes.Contains(blk.Content, []byte(`cut_at`)) || bytes.Contains(blk.Content, []byte(`\"turns\"`)) {
				out["read_request"] = n
				out["verbatim"] = bytes.Contains(blk.Content, []byte(hooktest.JSONText(recallQuery)))
			}
		}
	}
	if out["verbatim"] != true {
		for _, n := range names[max(0, len(names)-4):] {
			b, _ := os.ReadFile(filepath.Join(reqs, n))
			var req struct {
				Messages []json.RawMessage `json:"messages"`
			}
			_ = json.Unmarshal(b, &req)
			for _, m := range req.Messages[max(0, len(req.Messages)-3):] {
				t.Logf("%s: %s", n, tail(m, 700))
			}
		}
	}
	return out
}

// recordHooks adds a project-level hook that copies every hook input.
func recordHooks(t *testing.T, work, inputs string) {
	t.Helper()
	script := hooktest.TeeScript(t, inputs)
	cmd := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": script}}}
	settings := map[string]any{"hooks": map[string]any{
		"PreCompact": []any{cmd}, "PostCompact": []any{cmd}, "UserPromptSubmit": []any{cmd},
		"SessionStart": []any{map[string]any{"matcher": "compact", "hooks": cmd["hooks"]}},
	}}
	b, _ := json.Marshal(settings)
	_ = os.MkdirAll(filepath.Join(work, ".claude"), 0o755)
	if err := os.WriteFile(filepath.Join(work, ".claude", "settings.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
