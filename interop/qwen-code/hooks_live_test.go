package qwencode_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/internal/fake/openai"
	"github.com/ctxfold/ctxfold/internal/hooktest"
)

// qwenTurns plant hooktest.Planted in two resumed runs, one shell call
// each: the build id (build-42-ok, which the command spells build-%s-ok
// and 42) and the failing command's error (No such file or directory) are
// only in the tools' output; the build id is the recall's target. The
// build id's command waits a second after printing: Qwen Code 0.24.4's
// shell tool, not streaming (-p), ends the call on the child's "exit"
// event without draining its stdout, so a shell builtin that prints and
// exits at once sometimes returned "Output: (empty)" under load (a
// fresh-clone .ci/run, twice).
// /compress then runs Qwen Code's own compression, whose <state_snapshot>
// (openai.QwenSnapshot) keeps none of them.
var qwenTurns = []string{
	"Please migrate the session store to SQLite. Never touch /etc/ctxfold/prod.toml and keep the WAL under 64 MB " +
		"(see https://sqlite.org/wal.html). The entry point is `openStoreWithRetry` in internal/store/open_store.go. " +
		"Note the build id. [[shell: printf 'build-%s-ok\\n' 42; sleep 1]]",
	"No, actually use the flock-based lock instead of the pid file; the lock timeout is 250 ms. " +
		"Check the old store directory first. [[shell: ls /nonexistent-ctxfold-dir]]",
	"/compress",
}

const (
	qwenNext   = "What should I do next?"
	qwenRecall = "build-42-ok"
	// qwenContext opens the part Qwen Code appends to the prompt for a
	// UserPromptSubmit hook's additionalContext.
	qwenContext = "<qwen:user-prompt-submit-context>"
)

// TestLiveHooks measures what reaches the model after Qwen Code's own
// /compress, without and with ctxfold installed by 'ctxfold setup qwen'
// (PreCompact keeps the cache session up to date, PostCompact marks the
// compaction, UserPromptSubmit on the next prompt adds what the
// <state_snapshot> dropped), then the recall through ctxfold's MCP server.
// CTXFOLD_QWEN_BIN picks another client; CTXFOLD_HOOKS_RECORD=DIR writes
// figures.json and what the client sent to the hooks under DIR
// (interop/qwen-code/hooks.sh).
func TestLiveHooks(t *testing.T) {
	if os.Getenv("CTXFOLD_INTEROP_LIVE") != "1" {
		t.Skip("set CTXFOLD_INTEROP_LIVE=1 to drive the real Qwen Code")
	}
	node := os.Getenv("CTXFOLD_NODE22_DIR")
	if node == "" {
		home, _ := os.UserHomeDir()
		node = filepath.Join(home, ".cache", "ctxfold-node22")
	}
	// The client's "#!/usr/bin/env node" needs Node 22 (record.sh installs it).
	t.Setenv("PATH", filepath.Join(node, "node_modules", "node", "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	client := hooktest.ClientBin(t, "CTXFOLD_QWEN_BIN", "qwen-code-0.24.4", "qwen", "interop/qwen-code/record.sh")
	bin := hooktest.Build(t)
	runs, recall := hooktest.Acceptance(t, "Qwen Code", "after /compress", func(mode string) (hooktest.Run, map[string]any) {
		return qwenSession(t, client, bin, mode)
	})
	hooktest.RecordFigures(t, "qwen-code", client, runs, recall)
}

// qwenSession drives one session; with ctxfold it also runs the recall.
func qwenSession(t *testing.T, client, bin, mode string) (hooktest.Run, map[string]any) {
	t.Helper()
	tmp, _ := filepath.EvalSymlinks(t.TempDir())
	home, project, inputs := filepath.Join(tmp, "home"), filepath.Join(tmp, "project"), filepath.Join(tmp, "inputs")
	for _, d := range []string{filepath.Join(home, ".qwen"), project} {
		_ = os.MkdirAll(d, 0o755)
	}
	// Managed auto-memory off: its background extractor is a side request.
	settings := filepath.Join(home, ".qwen", "settings.json")
	if err := os.WriteFile(settings, []byte(`{"memory":{"enableManagedAutoMemory":false,"enableManagedAutoDream":false}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startFake(t)
	env := append(os.Environ(), "HOME="+home, "OPENAI_BASE_URL="+srv.url, "OPENAI_API_KEY=fake-interop-key",
		"OPENAI_MODEL=qwen3-coder-plus", "QWEN_CODE_SUPPRESS_YOLO_WARNING=1", "NO_COLOR=1", "XDG_CACHE_HOME=")
	if mode == "with" {
		setup := exec.Command(bin, "setup", "qwen", "--command", bin)
		setup.Env = env
		if out, err := setup.CombinedOutput(); err != nil {
			t.Fatalf("setup qwen: %v\n%s", err, out)
		}
		if dir := os.Getenv("CTXFOLD_HOOKS_RECORD"); dir != "" {
			// A hook beside ctxfold's copies every input of the events
			// ctxfold handles, and of SessionStart.
			hooktest.AddTee(t, settings, hooktest.TeeScript(t, inputs), []string{"PreCompact", "PostCompact", "UserPromptSubmit", "SessionStart"})
			defer saveQwenInputs(t, inputs, filepath.Join(dir, "hook-inputs"), tmp)
		}
	}
	run := func(prompt string, resume bool) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		args := []string{"--auth-type", "openai", "--yolo", "-p", prompt}
		if resume {
			args = append([]string{"-c"}, args...)
		}
		cmd := exec.CommandContext(ctx, client, args...)
		cmd.Dir, cmd.Env, cmd.WaitDelay = project, env, 5*time.Second
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("qwen %q: %v\n%s", prompt, err, out)
		}
	}
	for i, p := range qwenTurns {
		run(p, i > 0)
	}
	before := len(srv.Requests())
	run(qwenNext, true)
	var messages json.RawMessage
	var size int
	for _, q := range srv.Requests()[before:] {
		var b struct {
			Messages json.RawMessage `json:"messages"`
		}
		if json.Unmarshal(q.Body, &b) == nil && bytes.Contains(b.Messages, []byte(hooktest.JSONText(qwenNext))) && messages == nil {
			messages, size = b.Messages, len(q.Body)
		}
	}
	if messages == nil {
		t.Fatalf("%s: no request for the prompt after the compression", mode)
	}
	if !bytes.Contains(messages, []byte("state_snapshot")) {
		t.Fatalf("%s: the request after /compress carries no <state_snapshot>: did Qwen Code compress?", mode)
	}
	var sent [][]byte
	for _, q := range srv.Requests()[:before] {
		sent = append(sent, q.Body)
	}
	// Under load Qwen Code's shell tool has recorded a command's error as
	// "(none)": only what it sent before /compress is planted.
	planted := hooktest.Sent(t, hooktest.Planted, sent)
	if len(planted) < len(hooktest.Planted)-1 {
		t.Fatalf("%s: Qwen Code sent only %d of the %d planted facts before /compress", mode, len(planted), len(hooktest.Planted))
	}
	r := hooktest.Measure(mode, planted, messages, size, func(f hooktest.Fact) { t.Logf("%s: lost %s %q", mode, f.Kind, f.Text) })
	if mode != "with" {
		return r, nil
	}
	r.Injection, r.Context = hooktest.Injection(home), qwenInjection(messages, tmp)
	rec := map[string]any{"query": qwenRecall, "query_visible_before_recall": bytes.Contains(messages, []byte(qwenRecall))}
	from := len(srv.Requests())
	run("Find what the build said. "+openai.MarkerRecall+" "+qwenRecall+"]]", true)
	qwenRecallCheck(t, srv.Requests(), from, rec)
	return r, rec
}

// fakeServer is the fake OpenAI provider of one session, on 127.0.0.1.
type fakeServer struct {
	*openai.Server
	url string
}

func startFake(t *testing.T) fakeServer {
	t.Helper()
	srv, err := openai.New("")
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
	return fakeServer{srv, "http://" + l.Addr().String() + "/v1"}
}

// Paths and ids that differ at every recording.
var (
	uuidRE    = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	notSlugRE = regexp.MustCompile(`[^a-zA-Z0-9]`)
)

// normaliseRun puts /interop for the run's temporary folder, also as Qwen
// Code spells it in its projects folder's name, and <uuid> for ids.
func normaliseRun(s, tmp string) string {
	s = strings.ReplaceAll(s, tmp, "/interop")
	s = strings.ReplaceAll(s, notSlugRE.ReplaceAllString(tmp, "-"), "-interop")
	return uuidRE.ReplaceAllString(s, "<uuid>")
}

// qwenInjection is the context the request carries: the text of the part
// Qwen Code appended for the UserPromptSubmit hook, normalised.
func qwenInjection(messages json.RawMessage, tmp string) string {
	var ms []struct {
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(messages, &ms)
	for _, m := range ms {
		var parts []struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(m.Content, &parts)
		for _, p := range parts {
			if strings.HasPrefix(p.Text, qwenContext) {
				return normaliseRun(p.Text, tmp)
			}
		}
	}
	return ""
}

// qwenOutputs are the tool results of a request, by the name of the tool
// called (the printf call's only when it printed the build id).
func qwenOutputs(body []byte) map[string]string {
	return qwenResults(body, func(name, text string) bool {
		return name != "run_shell_command" || strings.Contains(text, qwenRecall)
	})
}

// qwenToolResults are every tool result of a request, by tool name.
func qwenToolResults(body []byte) map[string]string {
	return qwenResults(body, func(string, string) bool { return true })
}

func qwenResults(body []byte, keep func(name, text string) bool) map[string]string {
	var b struct {
		Messages []struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tool_calls"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(body, &b)
	names, out := map[string]string{}, map[string]string{}
	for _, m := range b.Messages {
		for _, c := range m.ToolCalls {
			names[c.ID] = c.Function.Name
		}
		if m.Role != "tool" {
			continue
		}
		var text string
		if json.Unmarshal(m.Content, &text) != nil {
			var parts []struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(m.Content, &parts)
			for _, p := range parts {
				text += p.Text
			}
		}
		if name := names[m.ToolCallID]; keep(name, text) {
			out[name] = text
		}
	}
	return out
}

// qwenRecallCheck checks the recall's requests from index from on: the
// search_history result names a hit covered by a summary, and the
// read_turns result Qwen Code sent back carries that turn exactly as the
// model read it before the compression (the printf call's output).
func qwenRecallCheck(t *testing.T, reqs []openai.Recorded, from int, rec map[string]any) {
	t.Helper()
	var original string
	for _, q := range reqs[:from] {
		if o, ok := qwenOutputs(q.Body)["run_shell_command"]; ok && original == "" {
			original = o
		}
	}
	rec["verbatim"], rec["covered"] = false, false
	if original == "" {
		t.Errorf("no request before the recall carries the output %q", qwenRecall)
		// What the tool results said instead (a shell run that failed or
		// timed out under load, say), so a rare failure can be read.
		for i, q := range reqs[:from] {
			for name, text := range qwenToolResults(q.Body) {
				t.Logf("request %d: %s result %.300q", i+1, name, text)
			}
		}
		return
	}
	for _, q := range reqs[from:] {
		o := qwenOutputs(q.Body)
		if s, ok := o["mcp__ctxfold__search_history"]; ok {
			rec["search_call"] = "mcp__ctxfold__search_history"
			rec["covered"] = strings.Contains(s, "covered by summary")
		}
		if s, ok := o["mcp__ctxfold__read_turns"]; ok {
			rec["read_call"] = "mcp__ctxfold__read_turns"
			rec["verbatim"] = strings.Contains(s, original) && strings.Contains(s, "covered by summary")
			if rec["verbatim"] != true {
				t.Logf("read_turns result %q; the model read %q", s, original)
			}
		}
	}
}

// saveQwenInputs writes the recorded hook inputs in order, normalised.
func saveQwenInputs(t *testing.T, from, to, tmp string) {
	slug := notSlugRE.ReplaceAllString(tmp, "-")
	err := hooktest.SaveInputs(from, to, strings.NewReplacer(tmp, "/interop", slug, "-interop"), func(v map[string]any) {
		v["session_id"], v["timestamp"] = "<session_id>", "2026-01-01T00:00:00.000Z"
		hooktest.Placeholders(v, "prompt_id")
		if p, ok := v["transcript_path"].(string); ok {
			v["transcript_path"] = uuidRE.ReplaceAllString(p, "<session_id>")
		}
	})
	if err != nil {
		t.Error(err)
	}
}
