package geminicli_test

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

	"github.com/ctxfold/ctxfold/internal/fake/gemini"

	"github.com/ctxfold/ctxfold/internal/hooktest"
)

// geminiTurns plant hooktest.Planted; the fourth makes the fake report an inflated
// prompt count, so Gemini CLI compresses before its next request. The
// second runs a command whose output (build-42-ok, the command says %s and
// 42) only a folded turn holds: the recall's target.
var geminiTurns = []string{
	"Please migrate the session store to SQLite. Never touch /etc/ctxfold/prod.toml and keep the WAL under 64 MB " +
		"(see https://sqlite.org/wal.html). The entry point is `openStoreWithRetry` in internal/store/open_store.go.",
	"Note the build id. RUN: printf 'build-%s-ok\\n' 42",
	"Check the old store directory first. RUN: ls /nonexistent-ctxfold-dir",
	"No, actually use the flock-based lock instead of the pid file; the lock timeout is 250 ms.",
	"Keep going. " + gemini.InflateMarker + " RUN: echo checkpoint-soon",
}

const (
	geminiNext   = "What should I do next?"
	geminiRecall = "build-42-ok"
)

// TestLiveHooks measures what reaches the model after Gemini CLI's own
// automatic compression, without and with ctxfold installed by 'ctxfold
// setup gemini' (PreCompress keeps the cache session up to date, BeforeAgent
// on the next prompt adds what the <state_snapshot> dropped), then the
// recall through ctxfold's MCP server. CTXFOLD_GEMINI_BIN picks another
// client; CTXFOLD_HOOKS_RECORD=DIR writes figures.json and what the client
// sent to the hooks under DIR (interop/gemini-cli/hooks.sh).
func TestLiveHooks(t *testing.T) {
	if os.Getenv("CTXFOLD_INTEROP_LIVE") != "1" {
		t.Skip("set CTXFOLD_INTEROP_LIVE=1 to drive the real Gemini CLI")
	}
	client := hooktest.ClientBin(t, "CTXFOLD_GEMINI_BIN", "gemini-cli-0.61.0", "gemini", "interop/gemini-cli/record.sh")
	bin := hooktest.Build(t)
	runs, recall := hooktest.Acceptance(t, "Gemini CLI", "after its compression", func(mode string) (hooktest.Run, map[string]any) {
		return geminiSession(t, client, bin, mode)
	})
	hooktest.RecordFigures(t, "gemini-cli", client, runs, recall)
}

// geminiSession drives one session; with ctxfold it also runs the recall.
func geminiSession(t *testing.T, client, bin, mode string) (hooktest.Run, map[string]any) {
	t.Helper()
	tmp, _ := filepath.EvalSymlinks(t.TempDir())
	home, project, inputs := filepath.Join(tmp, "home"), filepath.Join(tmp, "project"), filepath.Join(tmp, "inputs")
	for _, d := range []string{filepath.Join(home, ".gemini"), project, inputs} {
		_ = os.MkdirAll(d, 0o755)
	}
	settings := filepath.Join(home, ".gemini", "settings.json")
	if err := os.WriteFile(settings, []byte(`{"security":{"auth":{"selectedType":"gemini-api-key"}}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := gemini.Start(gemini.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	env := append(os.Environ(), "HOME="+home, "GOOGLE_GEMINI_BASE_URL="+srv.URL(), "GEMINI_API_KEY=fake-interop-key",
		"GEMINI_CLI_TRUST_WORKSPACE=true", "NO_COLOR=1", "XDG_CACHE_HOME=")
	if mode == "with" {
		setup := exec.Command(bin, "setup", "gemini", "--command", bin)
		setup.Env = env
		if out, err := setup.CombinedOutput(); err != nil {
			t.Fatalf("setup gemini: %v\n%s", err, out)
		}
		if dir := os.Getenv("CTXFOLD_HOOKS_RECORD"); dir != "" {
			// A hook beside ctxfold's copies every input of the events
			// ctxfold handles, and of SessionStart.
			hooktest.AddTee(t, settings, hooktest.TeeScript(t, inputs), []string{"PreCompress", "BeforeAgent", "SessionStart"})
			defer saveGeminiInputs(t, inputs, filepath.Join(dir, "hook-inputs"), tmp)
		}
	}
	run := func(prompt string, resume bool) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		args := []string{"--yolo", "-p", prompt}
		if resume {
			args = append(args, "--resume", "latest")
		}
		cmd := exec.CommandContext(ctx, client, args...)
		cmd.Dir, cmd.Env, cmd.WaitDelay = project, env, 5*time.Second
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gemini %q: %v\n%s", prompt, err, out)
		}
	}
	for i, p := range geminiTurns {
		run(p, i > 0)
	}
	before := len(srv.Requests())
	run(geminiNext, true)
	var contents json.RawMessage
	var size int
	for _, q := range srv.Requests()[before:] {
		var b struct {
			Contents json.RawMessage `json:"contents"`
		}
		if q.Kind != "json" && json.Unmarshal(q.Body, &b) == nil && bytes.Contains(b.Contents, []byte(hooktest.JSONText(geminiNext))) && contents == nil {
			contents, size = b.Contents, len(q.Body)
		}
	}
	if contents == nil {
		t.Fatalf("%s: no main-model request for the prompt after the compression", mode)
	}
	if !bytes.Contains(contents, []byte("state_snapshot")) {
		t.Fatalf("%s: the request after the prompt carries no <state_snapshot>: did Gemini CLI compress?", mode)
	}
	r := hooktest.Measure(mode, hooktest.Planted, contents, size, func(f hooktest.Fact) { t.Logf("%s: lost %s %q", mode, f.Kind, f.Text) })
	if mode != "with" {
		return r, nil
	}
	r.Injection, r.Context = geminiInjection(t, home, contents, tmp)
	rec := map[string]any{"query": geminiRecall, "query_visible_before_recall": bytes.Contains(contents, []byte(geminiRecall))}
	from := len(srv.Requests())
	run("Find what the build said. "+gemini.RecallMarker+geminiRecall, true)
	geminiRecallCheck(t, srv.Requests(), from, rec)
	if dir := os.Getenv("CTXFOLD_HOOKS_RECORD"); dir != "" {
		saveGeminiRecall(t, srv.Requests(), filepath.Join(dir, "recall-contents.json"), tmp)
	}
	return r, rec
}

// Paths and ids that differ at every recording.
var (
	geminiSessionRE = regexp.MustCompile(`/chats/session-[^ ` + "`" + `]*\.jsonl`)
	uuidRE          = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
)

// geminiInjection is the hook state's record and the context the request
// carries (Gemini CLI appends it to the prompt as <hook_context>).
func geminiInjection(t *testing.T, home string, contents json.RawMessage, tmp string) (json.RawMessage, string) {
	t.Helper()
	inj := hooktest.Injection(home)
	var cs []struct {
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	}
	_ = json.Unmarshal(contents, &cs)
	for _, c := range cs {
		for _, p := range c.Parts {
			if strings.HasPrefix(p.Text, "<hook_context>ctxfold: ") {
				text := strings.ReplaceAll(p.Text, tmp, "/interop")
				text = geminiSessionRE.ReplaceAllString(text, "/chats/session-<start>-<id8>.jsonl")
				return inj, uuidRE.ReplaceAllString(text, "<uuid>")
			}
		}
	}
	return inj, ""
}

// geminiRecallCheck checks the recall's requests from index from on: the
// search_history result names a hit covered by a summary, and the
// read_turns result Gemini CLI sent back carries that turn exactly as the
// model read it before the compression (the printf call's
// functionResponse output). Gemini CLI wraps a tool's output in
// <untrusted_context> and escapes the tags inside it (&lt; &gt;): they are
// unescaped before the comparison.
func geminiRecallCheck(t *testing.T, reqs []gemini.Request, from int, rec map[string]any) {
	t.Helper()
	outputs := func(q gemini.Request) map[string]string {
		var b struct {
			Contents []struct {
				Parts []struct {
					FunctionResponse *struct {
						Name     string `json:"name"`
						Response struct {
							Output string `json:"output"`
						} `json:"response"`
					} `json:"functionResponse"`
				} `json:"parts"`
			} `json:"contents"`
		}
		_ = json.Unmarshal(q.Body, &b)
		out := map[string]string{}
		for _, c := range b.Contents {
			for _, p := range c.Parts {
				if fr := p.FunctionResponse; fr != nil {
					if fr.Name == "run_shell_command" && !strings.Contains(fr.Response.Output, geminiRecall) {
						continue
					}
					out[fr.Name] = fr.Response.Output
				}
			}
		}
		return out
	}
	var original string
	for _, q := range reqs[:from] {
		if o, ok := outputs(q)["run_shell_command"]; ok && original == "" {
			original = o
		}
	}
	rec["verbatim"], rec["covered"] = false, false
	if original == "" {
		t.Errorf("no request before the recall carries the output %q", geminiRecall)
		return
	}
	unescape := strings.NewReplacer("&lt;", "<", "&gt;", ">")
	for _, q := range reqs[from:] {
		o := outputs(q)
		if s, ok := o["mcp_ctxfold_search_history"]; ok {
			rec["search_call"] = "mcp_ctxfold_search_history"
			rec["covered"] = strings.Contains(s, "covered by summary")
		}
		if s, ok := o["mcp_ctxfold_read_turns"]; ok {
			rec["read_call"] = "mcp_ctxfold_read_turns"
			rec["verbatim"] = strings.Contains(unescape.Replace(s), original) && strings.Contains(s, "covered by summary")
			if rec["verbatim"] != true {
				t.Logf("read_turns result %q; the model read %q", s, original)
			}
		}
	}
}

// saveGeminiRecall writes the contents Gemini CLI sent after the recall
// prompt in its last request (the MCP calls and their function responses),
// normalised, so the fake API's parsing is tested on what the client sends.
func saveGeminiRecall(t *testing.T, reqs []gemini.Request, path, tmp string) {
	t.Helper()
	var b struct {
		Contents []json.RawMessage `json:"contents"`
	}
	_ = json.Unmarshal(reqs[len(reqs)-1].Body, &b)
	var tail []json.RawMessage
	for _, c := range b.Contents {
		var x struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		}
		_ = json.Unmarshal(c, &x)
		if len(x.Parts) > 0 && strings.Contains(x.Parts[0].Text, gemini.RecallMarker) {
			tail = nil // the recall prompt itself
		}
		tail = append(tail, c)
	}
	var raw bytes.Buffer
	enc := json.NewEncoder(&raw)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(tail)
	text := strings.ReplaceAll(raw.String(), tmp, "/interop")
	text = geminiSessionRE.ReplaceAllString(text, "/chats/session-<start>-<id8>.jsonl")
	text = uuidRE.ReplaceAllString(text, "<uuid>")
	text = regexp.MustCompile(`_1\d{12}_`).ReplaceAllString(text, "_1000000000001_")
	text = regexp.MustCompile(`PGID: \d+`).ReplaceAllString(text, "PGID: 1000")
	var out bytes.Buffer
	_ = json.Indent(&out, []byte(text), "", "  ")
	out.WriteByte('\n')
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// saveGeminiInputs writes the recorded hook inputs in order, normalised.
func saveGeminiInputs(t *testing.T, from, to, tmp string) {
	err := hooktest.SaveInputs(from, to, strings.NewReplacer(tmp, "/interop"), func(v map[string]any) {
		v["session_id"], v["timestamp"] = "<session_id>", "2026-01-01T00:00:00.000Z"
		if p, ok := v["transcript_path"].(string); ok {
			v["transcript_path"] = geminiSessionRE.ReplaceAllString(p, "/chats/session-<start>-<id8>.jsonl")
		}
	})
	if err != nil {
		t.Error(err)
	}
}
