package copilot_test

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

// copilotTurns plant hooktest.Planted. Copilot CLI's compaction keeps the
// user's messages verbatim (in <user_message> tags) and drops what tools
// printed, so the failing command's error is only in a tool's output; the
// fourth turn's output (checkpoint-42-reached, the command says $((6*7)))
// is the recall's target: no fact (a successful command's output), so the
// hook does not inject it.
var copilotTurns = []string{
	"Please migrate the session store to SQLite. Never touch /etc/ctxfold/prod.toml and keep the WAL under 64 MB " +
		"(see https://sqlite.org/wal.html). The entry point is `openStoreWithRetry` in internal/store/open_store.go.",
	"Check the old store directory first. [[shell: ls /nonexistent-ctxfold-dir]]",
	"No, actually use the flock-based lock instead of the pid file; the lock timeout is 250 ms.",
	"Keep going. [[shell: echo checkpoint-$((6*7))-reached]]",
}

const (
	copilotNext   = "What should I do next?"
	copilotRecall = "checkpoint-42-reached"
)

// TestLiveHooks measures what reaches the model after Copilot CLI's own
// /compact, without and with ctxfold installed by 'ctxfold setup copilot'
// (PreCompact brings the cache session up to date; UserPromptSubmit on the
// next prompt adds what the summary dropped), then the recall through
// ctxfold's MCP server. CTXFOLD_COPILOT_BIN picks another client;
// CTXFOLD_HOOKS_RECORD=DIR writes figures.json and what the client sent to
// the hooks under DIR (interop/copilot/hooks.sh).
func TestLiveHooks(t *testing.T) {
	if os.Getenv("CTXFOLD_INTEROP_LIVE") != "1" {
		t.Skip("set CTXFOLD_INTEROP_LIVE=1 to drive the real GitHub Copilot CLI " + version)
	}
	client := hooktest.ClientBin(t, "CTXFOLD_COPILOT_BIN", "copilot-"+version, "copilot", "interop/copilot/record.sh")
	bin := hooktest.Build(t)
	runs, recall := hooktest.Acceptance(t, "Copilot CLI", "after /compact", func(mode string) (hooktest.Run, map[string]any) {
		return copilotHooksSession(t, client, bin, mode)
	})
	if dir := os.Getenv("CTXFOLD_HOOKS_RECORD"); dir != "" {
		doc := map[string]any{"client": "copilot", "version": copilotVersion(t, client), "runs": runs, "recall": recall}
		if err := hooktest.WriteJSON(filepath.Join(dir, "figures.json"), doc); err != nil {
			t.Fatal(err)
		}
	}
}

// pkgCache is where the client's loader unpacks its package (record.sh's).
func pkgCache() string {
	cache := os.Getenv("CTXFOLD_INTEROP_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "ctxfold-interop")
	}
	return filepath.Join(cache, "copilot-pkg")
}

// copilotVersion is the client's version ("GitHub Copilot CLI 1.0.102.").
func copilotVersion(t *testing.T, client string) string {
	cmd := exec.Command(client, "--version")
	cmd.Env = append(os.Environ(), "COPILOT_PKG_CACHE_HOME="+pkgCache())
	out, _ := cmd.Output()
	if m := regexp.MustCompile(`(\d+\.\d+\.\d+)`).FindSubmatch(out); m != nil {
		return string(m[1])
	}
	t.Fatalf("%s --version: %q", client, out)
	return ""
}

// copilotHooksSession drives one session; with ctxfold it also runs the
// recall and returns what it found.
func copilotHooksSession(t *testing.T, client, bin, mode string) (hooktest.Run, map[string]any) {
	t.Helper()
	tmp, _ := filepath.EvalSymlinks(t.TempDir())
	home, work := filepath.Join(tmp, "home"), filepath.Join(tmp, "work")
	for _, d := range []string{filepath.Join(home, ".copilot"), work} {
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
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "COPILOT_") && !strings.HasPrefix(kv, "XDG_") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home, "COPILOT_PKG_CACHE_HOME="+pkgCache(), "NO_COLOR=1", "COPILOT_OFFLINE=true",
		"COPILOT_PROVIDER_BASE_URL=http://"+l.Addr().String()+"/v1", "COPILOT_PROVIDER_API_KEY=dummy",
		"COPILOT_PROVIDER_TYPE=openai", "COPILOT_MODEL=gpt-4.1", "COPILOT_PROVIDER_WIRE_API=completions")
	if mode == "with" {
		setup := exec.Command(bin, "setup", "copilot", "--command", bin)
		setup.Env = env
		if out, err := setup.CombinedOutput(); err != nil {
			t.Fatalf("setup copilot: %v\n%s", err, out)
		}
		if dir := os.Getenv("CTXFOLD_HOOKS_RECORD"); dir != "" {
			// A hook beside ctxfold's copies every hook input.
			hooktest.AddTee(t, filepath.Join(home, ".copilot", "hooks", "ctxfold.json"), hooktest.TeeScript(t, filepath.Join(tmp, "inputs")), nil)
			defer saveCopilotInputs(t, filepath.Join(tmp, "inputs"), filepath.Join(dir, "hook-inputs"), tmp)
		}
	}
	session := ""
	run := func(prompt string) {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		args := []string{"-p", prompt, "--allow-all-tools"}
		if session != "" {
			args = append(args, "--resume="+session)
		}
		cmd := exec.CommandContext(c, client, args...)
		cmd.Dir, cmd.Env, cmd.WaitDelay = work, env, 5*time.Second
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("copilot %v: %v\n%s", args, err, out)
		}
		if session == "" {
			logs, _ := filepath.Glob(filepath.Join(home, ".copilot", "session-state", "*", "events.jsonl"))
			if len(logs) != 1 {
				t.Fatalf("%d session logs after the first turn", len(logs))
			}
			session = filepath.Base(filepath.Dir(logs[0]))
		}
	}
	for _, p := range copilotTurns {
		run(p)
	}
	run("/compact")
	before := len(srv.Requests())
	run(copilotNext)
	var req []byte
	for _, r := range srv.Requests()[before:] {
		if req == nil && bytes.Contains(r.Body, []byte(copilotNext)) {
			req = r.Body
		}
	}
	if req == nil {
		t.Fatal("no request for the prompt after /compact")
	}
	if !bytes.Contains(req, []byte("The user ran shell commands in a scratch directory")) {
		t.Fatalf("%s: the request after the prompt does not carry Copilot's compaction summary: did it compact?", mode)
	}
	var body struct {
		Messages json.RawMessage `json:"messages"`
	}
	_ = json.Unmarshal(req, &body)
	r := hooktest.Measure(mode, hooktest.Planted, body.Messages, len(req), func(f hooktest.Fact) { t.Logf("%s: lost %s %q", mode, f.Kind, f.Text) })
	if mode != "with" {
		return r, nil
	}
	r.Injection, r.Context = hooktest.Injection(home), copilotContext(body.Messages, tmp, session)
	rec := map[string]any{"query": copilotRecall, "query_visible_before_recall": bytes.Contains(body.Messages, []byte(copilotRecall))}
	from := len(srv.Requests())
	run("Find what the checkpoint said. [[recall: " + copilotRecall + "]]")
	copilotRecallCheck(t, srv.Requests(), from, rec)
	if dir := os.Getenv("CTXFOLD_HOOKS_RECORD"); dir != "" {
		saveRecallMessages(t, srv.Requests(), filepath.Join(dir, "recall-messages.json"), tmp, session)
	}
	return r, rec
}

// saveRecallMessages writes the messages Copilot sent after the recall
// prompt in its last request — the MCP calls and their results —
// normalised (temporary folder, session id, node ids), so the fake
// provider's parsing is tested on what the client really sends.
func saveRecallMessages(t *testing.T, reqs []openai.Recorded, path, tmp, session string) {
	t.Helper()
	var req struct {
		Messages []json.RawMessage `json:"messages"`
	}
	_ = json.Unmarshal(reqs[len(reqs)-1].Body, &req)
	var msgs []json.RawMessage
	for _, raw := range req.Messages {
		var m struct {
			Role string `json:"role"`
		}
		if json.Unmarshal(raw, &m) == nil && m.Role == "user" {
			msgs = nil // only what followed the last user message (the recall prompt)
			continue
		}
		msgs = append(msgs, raw)
	}
	b, _ := json.Marshal(msgs)
	s := strings.ReplaceAll(strings.ReplaceAll(string(b), tmp, "/interop"), session, "<session_id>")
	s = uuidRE.ReplaceAllString(s, "<id>")
	s = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+\+00:00`).ReplaceAllString(s, "<datetime>")
	s = regexp.MustCompile(`…[0-9:.]+\+00:00`).ReplaceAllString(s, "…<time>")
	var out bytes.Buffer
	_ = json.Indent(&out, []byte(s), "", "  ")
	out.WriteByte('\n')
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// copilotContext is the hook's context as the request carries it: the
// <system_reminder> Copilot appends to the prompt, with the temporary
// folder and the session id normalised.
func copilotContext(messages json.RawMessage, tmp, session string) string {
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(messages, &msgs)
	for _, m := range msgs {
		var s string
		if m.Role != "user" || json.Unmarshal(m.Content, &s) != nil {
			continue
		}
		if i := strings.Index(s, "<system_reminder>\nctxfold: "); i >= 0 {
			s = strings.TrimSuffix(strings.TrimSpace(s[i+len("<system_reminder>\n"):]), "</system_reminder>")
			s = strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(s), tmp, "/interop"), session, "<session_id>")
			return uuidRE.ReplaceAllString(s, "<id>")
		}
	}
	return ""
}

// uuidRE matches the ids Copilot gives sessions and events (node ids),
// which differ at every recording.
var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tool_calls"`
}

func chatMessages(body []byte) []chatMessage {
	var req struct {
		Messages []chatMessage `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	return req.Messages
}

// messageText is a message's content or a call's output as text (internal/hooktest).
var messageText = hooktest.ContentText

// copilotRecallCheck checks the recall's requests from index from on: the
// search_history result the client sent back names a hit covered by a
// summary, and the read_turns result carries that turn exactly as the
// model read it before the compaction (the tool message of the echo).
func copilotRecallCheck(t *testing.T, reqs []openai.Recorded, from int, rec map[string]any) {
	t.Helper()
	var original string
	for _, r := range reqs[:from] {
		for _, m := range chatMessages(r.Body) {
			if m.Role == "tool" && strings.Contains(messageText(m.Content), copilotRecall) {
				original = messageText(m.Content)
			}
		}
	}
	rec["verbatim"], rec["covered"] = false, false
	if original == "" {
		t.Errorf("no request before the recall carries the output %q", copilotRecall)
		return
	}
	calls := map[string]string{}
	for _, r := range reqs[from:] {
		for _, m := range chatMessages(r.Body) {
			for _, c := range m.ToolCalls {
				calls[c.ID] = c.Function.Name
			}
			if m.Role != "tool" {
				continue
			}
			out := messageText(m.Content)
			var res struct {
				Hits []struct {
					ID, Status string
				} `json:"hits"`
				Turns []struct {
					ID, Text  string
					CoveredBy string `json:"covered_by"`
				} `json:"turns"`
			}
			// Copilot sends the tool's text, then its structured result
			// as JSON on a line of its own.
			if i := strings.LastIndex("\n"+out, "\n{"); i < 0 || json.NewDecoder(strings.NewReader(out[i:])).Decode(&res) != nil {
				rec["result_not_json"] = true
				continue
			}
			switch name := calls[m.ToolCallID]; {
			case strings.HasSuffix(name, "search_history"):
				rec["search_call"] = name
				for _, h := range res.Hits {
					if h.Status == "covered" {
						rec["covered"] = true
					}
				}
			case strings.HasSuffix(name, "read_turns") && len(res.Turns) > 0:
				rec["read_call"] = name
				rec["verbatim"] = res.Turns[0].Text == strings.TrimSpace(original) && res.Turns[0].CoveredBy != ""
				if rec["verbatim"] != true {
					t.Logf("read_turns quoted %q (covered by %q); the model read %q", res.Turns[0].Text, res.Turns[0].CoveredBy, original)
				}
			}
		}
	}
}

// saveCopilotInputs writes the recorded hook inputs in order, with the
// temporary folder, the session id and the times normalised.
func saveCopilotInputs(t *testing.T, from, to, tmp string) {
	ids := uuidRE
	err := hooktest.SaveInputs(from, to, strings.NewReplacer(tmp, "/interop"), func(v map[string]any) {
		hooktest.Placeholders(v, "session_id", "timestamp")
		if p, ok := v["transcript_path"].(string); ok {
			v["transcript_path"] = ids.ReplaceAllString(p, "<session_id>")
		}
	})
	if err != nil {
		t.Error(err)
	}
}
