package droid_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/internal/fake/openai"
	"github.com/ctxfold/ctxfold/internal/hooktest"
)

// hookTurns plant hooktest.Planted as the other clients' tests do: the
// request, the instructions, the path, the identifier, the URL, the
// correction and the number in the user's words; the failing command's
// error only in what the command printed. The shell call of the first
// turn prints the recall's text.
var hookTurns = []string{
	"Please migrate the session store to SQLite. Never touch /etc/ctxfold/prod.toml and keep the WAL under 64 MB " +
		"(see https://sqlite.org/wal.html). The entry point is `openStoreWithRetry` in internal/store/open_store.go. " +
		"[[shell: echo checkpoint-$((6*7))-reached]]",
	"Check the old store directory first. [[shell: ls /nonexistent-ctxfold-dir]]",
	"No, actually use the flock-based lock instead of the pid file; the lock timeout is 250 ms.",
	// Droid keeps the last ~12,000 tokens verbatim through its compaction:
	// 80 KB of notes push the planted turns out of that tail.
	"Write up the notes. [[pad: 80000]]",
	"Keep going. [[inflate]]",
	nextPrompt,
}

// nextPrompt is the turn Droid compacts at (the previous reply reported a
// usage above its limit); its shell call is where ctxfold's PostToolUse
// hook runs after the compaction.
const nextPrompt = "What should I do next? [[shell: echo next-step]]"

// promptNoTool is the prompt Droid compacts before in its JSON-RPC
// protocol (TestLiveHooksPrompt): no tool runs in its turn, so only its
// UserPromptSubmit can bring the facts.
const promptNoTool = "What should I do next?"

// recallQuery is text only a covered turn holds: the output of the first
// turn's shell call (the command says $((6*7))). A successful command's
// output is no fact, so the hook does not inject it; only the recall
// brings it back.
const recallQuery = "checkpoint-42-reached"

// TestLiveHooks measures what reaches the model after Factory Droid's own
// automatic compaction, without and with ctxfold installed by 'ctxfold
// setup droid', then the recall through ctxfold's MCP server
// (docs/HOOKS.md, "Factory Droid"). Droid 0.215 runs no hook around its
// automatic compaction and, in `droid exec`, no UserPromptSubmit: the
// facts reach the model through the PostToolUse hook of the first tool
// call after the compaction, so the request measured is the one after
// that call's result. CTXFOLD_DROID_BIN picks another client;
// CTXFOLD_HOOKS_RECORD=DIR writes figures.json and what Droid sent to the
// hooks under DIR (interop/droid/hooks.sh: testdata/hook/droid/<version>/).
func TestLiveHooks(t *testing.T) {
	if os.Getenv("CTXFOLD_INTEROP_LIVE") != "1" {
		t.Skip("set CTXFOLD_INTEROP_LIVE=1 to drive the real Factory Droid " + Version)
	}
	client := hooktest.ClientBin(t, "CTXFOLD_DROID_BIN", "droid-"+Version, "droid", "interop/droid/record.sh")
	bin := hooktest.Build(t)
	runs, recall := hooktest.Acceptance(t, "Droid", "after its compaction and the next tool call", func(mode string) (hooktest.Run, map[string]any) {
		return droidHooksSession(t, client, bin, mode, "stream")
	})
	hooktest.RecordFigures(t, "droid", client, runs, recall)
}

// TestLiveHooksPrompt is TestLiveHooks through Droid's JSON-RPC protocol
// (`droid exec --input-format stream-jsonrpc`, the one that runs
// UserPromptSubmit, as the interactive client does). There Droid
// compacts before it takes the next prompt (recorded), so that prompt's
// UserPromptSubmit finds the record and the facts come with it: the
// request measured is the first one after the compaction, the prompt
// "What should I do next?" (no tool call). With CTXFOLD_HOOKS_RECORD=DIR
// the figures go to DIR/figures-prompt.json.
func TestLiveHooksPrompt(t *testing.T) {
	if os.Getenv("CTXFOLD_INTEROP_LIVE") != "1" {
		t.Skip("set CTXFOLD_INTEROP_LIVE=1 to drive the real Factory Droid " + Version)
	}
	client := hooktest.ClientBin(t, "CTXFOLD_DROID_BIN", "droid-"+Version, "droid", "interop/droid/record.sh")
	bin := hooktest.Build(t)
	runs, recall := hooktest.Acceptance(t, "Droid", "after its compaction", func(mode string) (hooktest.Run, map[string]any) {
		return droidHooksSession(t, client, bin, mode, "rpc")
	})
	if dir := os.Getenv("CTXFOLD_HOOKS_RECORD"); dir != "" {
		doc := map[string]any{"client": "droid", "protocol": "stream-jsonrpc", "version": hooktest.ClientVersion(client), "runs": runs, "recall": recall}
		if err := hooktest.WriteJSON(filepath.Join(dir, "figures-prompt.json"), doc); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLiveHooksManual is TestLiveHooksPrompt after Droid's manual
// compaction (/compact; droid.compact_session in its JSON-RPC protocol):
// the planting turns, the compaction (its summary goes into a new
// session naming the old one as its parent), then a second process
// loads the new session and takes the prompt "What should I do next?".
// Droid sends the summary and none of the parent's turns; ctxfold's
// UserPromptSubmit in the new session follows the parent
// (format/droid), audits the summary against the folded turns and
// injects what it dropped. With CTXFOLD_HOOKS_RECORD=DIR the figures go
// to DIR/figures-manual.json.
func TestLiveHooksManual(t *testing.T) {
	if os.Getenv("CTXFOLD_INTEROP_LIVE") != "1" {
		t.Skip("set CTXFOLD_INTEROP_LIVE=1 to drive the real Factory Droid " + Version)
	}
	client := hooktest.ClientBin(t, "CTXFOLD_DROID_BIN", "droid-"+Version, "droid", "interop/droid/record.sh")
	bin := hooktest.Build(t)
	runs, recall := hooktest.Acceptance(t, "Droid", "after its manual compaction", func(mode string) (hooktest.Run, map[string]any) {
		return droidHooksSession(t, client, bin, mode, "manual")
	})
	if dir := os.Getenv("CTXFOLD_HOOKS_RECORD"); dir != "" {
		doc := map[string]any{"client": "droid", "protocol": "stream-jsonrpc", "compaction": "manual", "version": hooktest.ClientVersion(client), "runs": runs, "recall": recall}
		if err := hooktest.WriteJSON(filepath.Join(dir, "figures-manual.json"), doc); err != nil {
			t.Fatal(err)
		}
	}
}

// droidHooksSession drives one session, every turn on standard input of
// one `droid exec` (a second process cannot resume without a Factory
// login); with ctxfold it ends with the recall and returns what it found.
func droidHooksSession(t *testing.T, client, bin, mode, how string) (hooktest.Run, map[string]any) {
	t.Helper()
	rpc := how != "stream"
	tmp, _ := filepath.EvalSymlinks(t.TempDir())
	if keep := os.Getenv("CTXFOLD_KEEP_DIR"); keep != "" { // for a look afterwards
		tmp = filepath.Join(keep, mode+"-"+how)
		_ = os.RemoveAll(tmp)
	}
	home, work := filepath.Join(tmp, "home"), filepath.Join(tmp, "work")
	factory := filepath.Join(home, ".factory")
	for _, d := range []string{factory, work} {
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
	settings := `{"customModels":[{"model":"fake-model","displayName":"Fake","baseUrl":"http://` + l.Addr().String() +
		`/v1","apiKey":"dummy","provider":"generic-chat-completion-api","maxOutputTokens":1024}]}`
	if err := os.WriteFile(filepath.Join(factory, "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+home, "NO_COLOR=1", "XDG_CACHE_HOME=")
	turns := hookTurns
	if rpc {
		turns = append(slices.Clone(hookTurns[:len(hookTurns)-1]), promptNoTool)
	}
	if mode == "with" {
		setup := exec.Command(bin, "setup", "droid", "--command", bin)
		setup.Env = env
		if out, err := setup.CombinedOutput(); err != nil {
			t.Fatalf("setup droid: %v\n%s", err, out)
		}
		if dir := os.Getenv("CTXFOLD_HOOKS_RECORD"); dir != "" && !rpc {
			addTee(t, filepath.Join(factory, "hooks.json"), hooktest.TeeScript(t, filepath.Join(tmp, "inputs")))
			defer saveInputs(t, filepath.Join(tmp, "inputs"), filepath.Join(dir, "hook-inputs"), tmp)
		}
		turns = append(turns, "Find what the checkpoint said. [[recall: "+recallQuery+"]]")
	}
	switch {
	case how == "manual":
		// The planting turns, Droid's manual compaction, then the rest in
		// a second process that loads the new session.
		newID := droidRPCRun(t, ctx, client, work, env, "", hookTurns[:3], true)
		droidRPCRun(t, ctx, client, work, env, newID, turns[len(hookTurns)-1:], false)
	case rpc:
		droidRPC(t, ctx, client, work, env, turns)
	default:
		droidStream(t, ctx, client, work, env, turns)
	}
	reqs := chatRequests(srv.Requests())
	after := afterCompaction(t, reqs, mode, rpc)
	msgs := after.messages
	r := hooktest.Measure(mode, hooktest.Planted, msgs, len(after.body), func(f hooktest.Fact) { t.Logf("%s: lost %s %q", mode, f.Kind, f.Text) })
	if mode != "with" {
		return r, nil
	}
	r.Injection = hooktest.Injection(home)
	r.Context = injected(after, tmp)
	// What the model read last before the recall prompt: the query is
	// not there (only the recall brings it back).
	var before []byte
	for _, r := range reqs {
		if !bytes.Contains(r.messages, []byte("[[recall:")) {
			before = r.messages
		}
	}
	rec := map[string]any{"query": recallQuery, "query_visible_before_recall": bytes.Contains(before, []byte(recallQuery))}
	droidRecall(t, reqs, rec)
	return r, rec
}

// droidStream runs the turns on standard input of one `droid exec`
// (stream-json: a second process cannot resume without a Factory login).
func droidStream(t *testing.T, ctx context.Context, client, work string, env, turns []string) {
	t.Helper()
	var in bytes.Buffer
	for _, p := range turns {
		b, _ := json.Marshal(map[string]string{"role": "user", "content": p})
		in.Write(append(b, '\n'))
	}
	cmd := exec.CommandContext(ctx, client, "exec", "--auto", "low", "-m", "custom:fake-model",
		"--input-format", "stream-json", "-o", "stream-json")
	cmd.Dir, cmd.Env, cmd.Stdin, cmd.WaitDelay = work, env, &in, 5*time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("droid exec: %v\n%s", err, tail(out, 2000))
	}
}

// droidRPC runs the turns through Droid's JSON-RPC protocol (what its
// interactive client speaks to its agent): droid.initialize_session, then
// each prompt as droid.add_user_message, the next one sent when Droid's
// working state is back to idle.
func droidRPC(t *testing.T, ctx context.Context, client, work string, env, turns []string) {
	t.Helper()
	droidRPCRun(t, ctx, client, work, env, "", turns, false)
}

// droidRPCRun is droidRPC loading session load (droid.load_session)
// instead of starting one when load is not "", and with compact then
// compacting by hand (droid.compact_session, Droid's /compact): it
// returns the new session's id ("" without).
func droidRPCRun(t *testing.T, ctx context.Context, client, work string, env []string, load string, turns []string, compact bool) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, client, "exec", "--auto", "low", "-m", "custom:fake-model",
		"--input-format", "stream-jsonrpc", "--output-format", "stream-jsonrpc")
	cmd.Dir, cmd.Env, cmd.WaitDelay = work, env, 5*time.Second
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan []byte)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(lines)
	}()
	send := func(id int, method string, params any) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "factoryApiVersion": "1.0.0", "type": "request",
			"id": fmt.Sprint(id), "method": method, "params": params})
		if _, err := stdin.Write(append(b, '\n')); err != nil {
			t.Fatalf("droid %s: %v", method, err)
		}
	}
	wait := func(what string, done func(msg rpcMessage) bool) {
		for {
			select {
			case l, ok := <-lines:
				var m rpcMessage
				if !ok {
					t.Fatalf("droid exited waiting for %s\n%s", what, tail(stderr.Bytes(), 2000))
				}
				if json.Unmarshal(l, &m) == nil && done(m) {
					return
				}
			case <-ctx.Done():
				t.Fatalf("droid: no %s in time", what)
			}
		}
	}
	if load == "" {
		send(1, "droid.initialize_session", map[string]any{"machineId": "ctxfold-test", "cwd": work, "modelId": "custom:fake-model", "autonomyLevel": "low"})
	} else {
		send(1, "droid.load_session", map[string]any{"sessionId": load})
	}
	wait("session", func(m rpcMessage) bool { return m.Type == "response" && m.ID == "1" })
	for i, p := range turns {
		send(i+2, "droid.add_user_message", map[string]any{"text": p})
		wait("idle after "+p, func(m rpcMessage) bool {
			return m.Params.Notification.Type == "droid_working_state_changed" && m.Params.Notification.NewState == "idle"
		})
	}
	newID := ""
	if compact {
		id := fmt.Sprint(len(turns) + 2)
		send(len(turns)+2, "droid.compact_session", map[string]any{})
		wait("droid.compact_session", func(m rpcMessage) bool {
			if m.Type == "response" && m.ID == id {
				newID = m.Result.NewSessionID
				return true
			}
			return false
		})
		if newID == "" {
			t.Fatal("droid.compact_session answered no newSessionId")
		}
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Logf("droid exec (jsonrpc) exited: %v", err)
	}
	return newID
}

// rpcMessage is the part of Droid's JSON-RPC output the driver reads.
type rpcMessage struct {
	Type   string `json:"type"`
	ID     string `json:"id"`
	Result struct {
		NewSessionID string `json:"newSessionId"`
	} `json:"result"`
	Params struct {
		Notification struct {
			Type     string `json:"type"`
			NewState string `json:"newState"`
		} `json:"notification"`
	} `json:"params"`
}

// chatRequest is one request Droid sent, decoded.
type chatRequest struct {
	body     []byte
	messages json.RawMessage
	request  struct {
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
}

func chatRequests(rs []openai.Recorded) []chatRequest {
	var out []chatRequest
	for _, r := range rs {
		c := chatRequest{body: r.Body}
		var raw struct {
			Messages json.RawMessage `json:"messages"`
		}
		if json.Unmarshal(r.Body, &raw) != nil || json.Unmarshal(r.Body, &c.request) != nil ||
			bytes.Contains(r.Body, []byte("generates concise session titles")) {
			// Droid's title request for a session loaded without one (the
			// manual compaction's): no turn of the conversation.
			continue
		}
		c.messages = raw.Messages
		out = append(out, c)
	}
	return out
}

// afterCompaction is the request after the first tool call following
// Droid's compaction: the second request of the turn that compacted
// (nextPrompt). Droid's summary request is the one that ends with its
// compaction cue; the request after it must carry the fake's summary.
func afterCompaction(t *testing.T, reqs []chatRequest, mode string, rpc bool) chatRequest {
	t.Helper()
	prompt := nextPrompt
	if rpc {
		prompt = promptNoTool
	}
	for i, r := range reqs {
		if n := len(r.request.Messages); n == 0 || !strings.Contains(contentString(r.request.Messages[n-1].Content), openai.DroidCompactionCue) {
			continue
		}
		if i+1 >= len(reqs) || (!rpc && i+2 >= len(reqs)) {
			break
		}
		first := reqs[i+1]
		if !bytes.Contains(first.messages, []byte(hooktest.JSONText(openai.SummaryText))) ||
			!bytes.Contains(first.messages, []byte(hooktest.JSONText(prompt))) {
			t.Fatalf("%s: the request after Droid's summary request does not carry the summary and %q", mode, prompt)
		}
		if rpc {
			return first
		}
		next := reqs[i+2]
		kept := hooktest.Measure(mode, hooktest.Planted, first.messages, len(first.body), nil)
		t.Logf("%s: the first request after the compaction (before any hook could run) carries %d of %d", mode, kept.KeptCount, kept.Planted)
		return next
	}
	t.Fatalf("%s: Droid sent no compaction request (did it compact?)", mode)
	return chatRequest{}
}

// injected is ctxfold's text as the request carries it (Droid sends a
// hook's additionalContext as a user message of its own), with the
// temporary directory normalised.
func injected(r chatRequest, tmp string) string {
	norm := strings.NewReplacer(tmp, "/interop", strings.ReplaceAll(tmp, "/", "-"), "-interop")
	for _, m := range r.request.Messages {
		var s string
		if json.Unmarshal(m.Content, &s) == nil && strings.HasPrefix(s, "ctxfold: ") {
			return nodeIDRE.ReplaceAllString(norm.Replace(s), "<session>")
		}
		var parts []struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(m.Content, &parts)
		for _, p := range parts {
			if strings.HasPrefix(p.Text, "ctxfold: ") {
				return nodeIDRE.ReplaceAllString(norm.Replace(p.Text), "<session>")
			}
		}
	}
	return ""
}

// A session id (in paths and node ids) differs at every recording.
var nodeIDRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// droidRecall checks the recall: the fake found ctxfold's tools (behind
// Droid's ToolSearch), search_history named a hit covered by a summary,
// and the read_turns result Droid sent back carries that turn exactly as
// the model read it before the compaction (the shell call's result).
func droidRecall(t *testing.T, reqs []chatRequest, rec map[string]any) {
	t.Helper()
	rec["verbatim"], rec["covered"] = false, false
	original := ""
	names := map[string]string{}
	for _, r := range reqs {
		for _, m := range r.request.Messages {
			for _, c := range m.ToolCalls {
				names[c.ID] = c.Function.Name
			}
			if m.Role != "tool" {
				continue
			}
			text := contentString(m.Content)
			switch name := names[m.ToolCallID]; {
			case name == "Execute" && strings.HasPrefix(text, recallQuery) && original == "":
				original = text
			case name == "ToolSearch":
				rec["tool_search"] = true
			case strings.HasSuffix(name, "search_history"):
				// Droid 0.215 sends the tool's text rendering back: a hit
				// is "- ID · role · covered by summary S …".
				rec["search_call"] = name
				for _, line := range strings.Split(text, "\n") {
					if strings.HasPrefix(line, "- ") && strings.Contains(line, " · covered by summary ") {
						rec["covered"] = true
					}
				}
			case strings.HasSuffix(name, "read_turns"):
				// "=== ID · role · covered by summary S", then the turn.
				rec["read_call"] = name
				head, body, _ := strings.Cut(text, "\n")
				rec["verbatim"] = original != "" && strings.HasPrefix(head, "=== ") && strings.Contains(head, " · covered by summary ") &&
					strings.HasPrefix(body, strings.TrimSpace(original))
				if rec["verbatim"] != true {
					t.Logf("read_turns quoted %q; the model read %q", tail([]byte(text), 1500), original)
				}
			}
		}
	}
	if original == "" {
		t.Errorf("no request before the recall carries the output %q", recallQuery)
	}
	if rec["verbatim"] != true && len(reqs) > 0 {
		last := reqs[len(reqs)-1].request.Messages
		for _, m := range last[max(0, len(last)-4):] {
			t.Logf("last request: %s %s %v", m.Role, tail([]byte(contentString(m.Content)), 600), m.ToolCalls)
		}
	}
}

// contentString is a message's content or a call's output as text (internal/hooktest).
var contentString = hooktest.ContentText

func tail(b []byte, n int) string {
	return string(b[max(0, len(b)-n):])
}

// addTee adds script as a hook beside ctxfold's for every event of
// Droid's hooks.json (events at its top level), and for SessionStart.
func addTee(t *testing.T, path, script string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	tee := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": script}}}
	for _, ev := range []string{"PreCompact", "UserPromptSubmit", "PostToolUse", "SessionStart", "Stop"} {
		list, _ := doc[ev].([]any)
		doc[ev] = append(list, tee)
	}
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// saveInputs writes the recorded hook inputs in order, the temporary
// directory and the session id normalised.
func saveInputs(t *testing.T, from, to, tmp string) {
	err := hooktest.SaveInputs(from, to, strings.NewReplacer(tmp, "/interop", strings.ReplaceAll(tmp, "/", "-"), "-interop"), func(v map[string]any) {
		hooktest.Placeholders(v, "session_id", "message_id", "elapsed_time")
		for _, k := range []string{"transcript_path", "CLAUDE_ENV_FILE"} {
			if s, ok := v[k].(string); ok {
				v[k] = nodeIDRE.ReplaceAllString(s, "<session_id>")
			}
		}
		// The node ids a recall names differ at every recording too.
		for _, k := range []string{"tool_input", "tool_response"} {
			if b, err := json.Marshal(v[k]); err == nil && v[k] != nil {
				var x any
				if json.Unmarshal([]byte(nodeIDRE.ReplaceAllString(string(b), "<id>")), &x) == nil {
					v[k] = x
				}
			}
		}
		if s, ok := v["tool_response"].(string); ok && len(s) > 2000 {
			v["tool_response"] = s[:2000] + "…"
		}
	})
	if err != nil {
		t.Error(err)
	}
}
