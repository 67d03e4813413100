package codex_test

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

// recallQuery is text only a covered turn holds: the output of the shell
// call of the turn Codex compacts in (the command says $((6*7)), its output
// 42). Codex keeps the user's messages after its compaction, not tool
// outputs, and a successful command's output is no fact, so the hook does
// not inject it: only the recall brings it back.
const recallQuery = "checkpoint-42-reached"

// TestLiveHooks measures what reaches the model after Codex's own
// automatic compaction (model_auto_compact_token_limit, the fake reporting
// an inflated usage), without and with ctxfold installed by
// 'ctxfold setup codex', then the recall through ctxfold's MCP server.
// Codex runs untrusted hooks only with --dangerously-bypass-hook-trust,
// which the "with" run passes (a user trusts them once, interactively).
// CTXFOLD_CODEX_BIN picks another client; CTXFOLD_CODEX_MODEL another model
// (gpt-5.5, of Codex's catalogue, offers MCP tools behind its tool_search;
// a model outside it, e.g. gpt-5.1-codex, offers them directly);
// CTXFOLD_HOOKS_RECORD=DIR writes
// figures.json and what Codex sent to the hooks under DIR
// (interop/codex/hooks.sh: testdata/hook/codex/<version>/).
func TestLiveHooks(t *testing.T) {
	if os.Getenv("CTXFOLD_INTEROP_LIVE") != "1" {
		t.Skip("set CTXFOLD_INTEROP_LIVE=1 to drive the real Codex CLI " + Version)
	}
	client := codexBin(t)
	bin := hooktest.Build(t)
	runs, recall := hooktest.Acceptance(t, "Codex", "after its compaction", func(mode string) (hooktest.Run, map[string]any) {
		return codexHooksSession(t, client, bin, mode)
	})
	hooktest.RecordFigures(t, "codex", client, runs, recall)
}

// codexHooksSession drives one session; with ctxfold it also runs the
// recall and returns what it found.
func codexHooksSession(t *testing.T, client, bin, mode string) (hooktest.Run, map[string]any) {
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
	model := os.Getenv("CTXFOLD_CODEX_MODEL")
	if model == "" {
		model = "gpt-5.5"
	}
	config := `model = "` + model + `"
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
			// A hook beside ctxfold's copies every hook input.
			hooktest.AddTee(t, filepath.Join(codexHome, "hooks.json"), hooktest.TeeScript(t, filepath.Join(tmp, "inputs")), nil)
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
	run("resume", "--last", "Keep going. [[inflate]] [[shell: echo checkpoint-$((6*7))-reached]]")
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
	r := hooktest.Measure(mode, hooktest.Planted, body.Input, len(req), func(f hooktest.Fact) { t.Logf("%s: lost %s %q", mode, f.Kind, f.Text) })
	if mode != "with" {
		return r, nil
	}
	r.Injection, r.Context = hookInjection(t, chome, body.Input, tmp)
	rec := map[string]any{"query": recallQuery, "query_visible_before_recall": bytes.Contains(body.Input, []byte(recallQuery))}
	from := len(srv.Requests())
	run("resume", "--last", "Find what the checkpoint said. [[recall: "+recallQuery+"]]")
	codexRecall(t, srv.Requests(), from, rec)
	if dir := os.Getenv("CTXFOLD_HOOKS_RECORD"); dir != "" {
		saveRecallItems(t, srv.Requests(), filepath.Join(dir, "recall-items.json"), tmp)
	}
	return r, rec
}

// hookInjection is the hook state's record of the injection and the
// context as the request carries it.
func hookInjection(t *testing.T, chome string, input json.RawMessage, tmp string) (json.RawMessage, string) {
	t.Helper()
	inj := hooktest.Injection(chome)
	var items []struct {
		Role    string `json:"role"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	_ = json.Unmarshal(input, &items)
	for _, it := range items {
		for _, c := range it.Content {
			if strings.HasPrefix(c.Text, "ctxfold: ") {
				text := strings.ReplaceAll(c.Text, tmp, "/interop")
				text = rolloutPathRE.ReplaceAllString(text, "/sessions/YYYY/MM/DD/rollout-<session_id>.jsonl")
				return inj, nodeIDRE.ReplaceAllString(text, "cx<session>-")
			}
		}
	}
	return inj, ""
}

// A rollout's path and the node ids ctxfold derives from its session id
// differ at every recording.
var (
	rolloutPathRE = regexp.MustCompile(`/sessions/\d{4}/\d\d/\d\d/rollout-[^ ` + "`" + `]*\.jsonl`)
	nodeIDRE      = regexp.MustCompile(`\bcx[0-9a-f]{8}-`)
)

// codexRecall checks the recall's requests from index from on: Codex
// found the MCP tools (through its tool_search or offered directly), the
// search_history output names a hit covered by a summary, and the
// read_turns output Codex sent back carries that turn exactly as the model
// read it before the compaction (the function_call_output of the echo).
func codexRecall(t *testing.T, reqs []openai.Recorded, from int, rec map[string]any) {
	t.Helper()
	var original string
	for _, r := range reqs[:from] {
		for _, it := range recallItems(r.Body) {
			if it.Type == "function_call_output" && strings.Contains(outputString(it.Output), recallQuery) {
				original = outputString(it.Output)
			}
		}
	}
	rec["verbatim"], rec["covered"] = false, false
	if original == "" {
		t.Errorf("no request before the recall carries the output %q", recallQuery)
		return
	}
	calls := map[string]string{}
	for _, r := range reqs[from:] {
		for _, it := range recallItems(r.Body) {
			switch it.Type {
			case "tool_search_call":
				rec["tool_search"] = true
			case "function_call":
				calls[it.CallID] = it.Namespace + "/" + it.Name
			case "function_call_output":
				out := outputString(it.Output)
				var res struct {
					Hits []struct {
						ID, Status string
					} `json:"hits"`
					Turns []struct {
						ID, Text  string
						CoveredBy string `json:"covered_by"`
					} `json:"turns"`
				}
				if i := strings.Index(out, "{"); i < 0 || json.NewDecoder(strings.NewReader(out[i:])).Decode(&res) != nil {
					continue
				}
				switch {
				case strings.HasSuffix(calls[it.CallID], "search_history"):
					rec["search_call"] = calls[it.CallID]
					for _, h := range res.Hits {
						if h.Status == "covered" {
							rec["covered"] = true
						}
					}
				case strings.HasSuffix(calls[it.CallID], "read_turns") && len(res.Turns) > 0:
					rec["read_call"] = calls[it.CallID]
					rec["verbatim"] = res.Turns[0].Text == strings.TrimSpace(original) && res.Turns[0].CoveredBy != ""
					if rec["verbatim"] != true {
						t.Logf("read_turns quoted %q (covered by %q); the model read %q", res.Turns[0].Text, res.Turns[0].CoveredBy, original)
					}
				}
			}
		}
	}
}

// saveRecallItems writes the items Codex sent after the recall prompt in
// its last request — tool_search_call, tool_search_output, the MCP calls and
// their outputs — normalised (temporary paths, rollout names, node ids),
// so the fake provider's parsing is tested on what Codex really sends.
func saveRecallItems(t *testing.T, reqs []openai.Recorded, path, tmp string) {
	t.Helper()
	var req struct {
		Input []json.RawMessage `json:"input"`
	}
	_ = json.Unmarshal(reqs[len(reqs)-1].Body, &req)
	var items []json.RawMessage
	for _, raw := range req.Input {
		var it struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(raw, &it) == nil && it.Type != "message" && it.Type != "reasoning" {
			items = append(items, raw)
		} else {
			items = nil // only what followed the last message (the recall prompt)
		}
	}
	b, _ := json.Marshal(items)
	s := strings.ReplaceAll(string(b), tmp, "/interop")
	s = rolloutPathRE.ReplaceAllString(s, "/sessions/YYYY/MM/DD/rollout-<session_id>.jsonl")
	s = nodeIDRE.ReplaceAllString(s, "cx<session>-")
	s = regexp.MustCompile(`(summary_)cx[0-9a-f]{8}-`).ReplaceAllString(s, "${1}cx<session>-")
	s = regexp.MustCompile(`"(id|call_id)":"(tso|fco)_[0-9a-f-]+"`).ReplaceAllString(s, `"${1}":"${2}_<uuid>"`)
	s = regexp.MustCompile(`"output":"Wall time: [0-9.]+ seconds`).ReplaceAllString(s, `"output":"Wall time: 0.0500 seconds`)
	s = regexp.MustCompile(`Chunk ID: [0-9a-f]+`).ReplaceAllString(s, "Chunk ID: <chunk>")
	var out bytes.Buffer
	_ = json.Indent(&out, []byte(s), "", "  ")
	out.WriteByte('\n')
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

type recallItem struct {
	Type      string          `json:"type"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Namespace string          `json:"namespace"`
	Output    json.RawMessage `json:"output"`
}

func recallItems(body []byte) []recallItem {
	var req struct {
		Input []recallItem `json:"input"`
	}
	_ = json.Unmarshal(body, &req)
	return req.Input
}

// outputString is a message's content or a call's output as text (internal/hooktest).
var outputString = hooktest.ContentText

// saveInputs writes the recorded hook inputs in order, with the temporary
// directory, ids and dates of the rollout path normalised.
func saveInputs(t *testing.T, from, to, tmp string) {
	err := hooktest.SaveInputs(from, to, strings.NewReplacer(tmp, "/interop"), func(v map[string]any) {
		hooktest.Placeholders(v, "session_id", "turn_id")
		if p, ok := v["transcript_path"].(string); ok {
			if i := strings.Index(p, "/sessions/"); i >= 0 {
				v["transcript_path"] = p[:i] + "/sessions/YYYY/MM/DD/rollout-<session_id>.jsonl"
			}
		}
	})
	if err != nil {
		t.Error(err)
	}
}
