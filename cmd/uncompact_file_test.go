package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	ccCompacted      = "../testdata/interop/claude-code/2.1.328/compact/transcript/00000000-0000-4000-8000-000000000001.jsonl"
	codexCompacted   = "../testdata/interop/codex/0.169.0/compaction/rollout-2026-01-01T00-00-00-00000000-0000-7000-8000-000000000001.jsonl"
	geminiCompressed = "../testdata/interop/gemini-cli/0.61.0/compression/chats/session-2026-01-01T00-00-00000001.jsonl"
)

// copyTranscript puts a recording where a test may leave it untouched.
func copyTranscript(t *testing.T, src string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestUncompactFileExportsTheWholeHistory(t *testing.T) {
	// clientSummary is a line of the client's summary (the fake
	// provider's answer to its compaction request).
	for _, c := range []struct{ client, src, homeVar, clientSummary string }{
		{"claude-code", ccCompacted, "CLAUDE_CONFIG_DIR", "This session is being continued from a previous conversation"},
		{"codex", codexCompacted, "CODEX_HOME", "Summary for the next model"},
		{"gemini", geminiCompressed, "GEMINI_CLI_HOME", "fake summary of"},
	} {
		t.Run(c.client, func(t *testing.T) {
			file := copyTranscript(t, c.src)
			original, _ := os.ReadFile(file)
			env := map[string]string{"HOME": t.TempDir(), "XDG_CACHE_HOME": t.TempDir(), c.homeVar: t.TempDir()}
			if b, _ := os.ReadFile(file); !bytes.Contains(b, []byte(c.clientSummary)) {
				t.Fatalf("the recording does not hold the client's summary %q", c.clientSummary)
			}
			compacted := cliRun(t, env, false, "render", file, "--format", "ids")
			raw := cliRun(t, env, false, "render", file, "--format", "jsonl", "--raw")
			r := cliRun(t, env, false, "uncompact", file, "--export", c.client, "--json")
			var out struct {
				SessionID string `json:"session_id"`
				Output    string `json:"output"`
				Resume    string `json:"resume"`
				Undone    string `json:"undone"`
			}
			if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil || r.Code != 0 || out.SessionID == "" || out.Undone == "" {
				t.Fatalf("exit %d %v: %s %s", r.Code, err, r.Stdout, r.Stderr)
			}
			if !strings.HasPrefix(out.Output, env[c.homeVar]) || !strings.Contains(out.Resume, out.SessionID) {
				t.Errorf("output %s (want under %s), resume %q", out.Output, env[c.homeVar], out.Resume)
			}
			if now, _ := os.ReadFile(file); !bytes.Equal(now, original) {
				t.Errorf("the original transcript changed")
			}
			// What the client reads on resume: every turn, no summary.
			back := cliRun(t, env, false, "render", out.Output, "--format", "ids")
			if back.Code != 0 {
				t.Fatalf("render the export: %d %s", back.Code, back.Stderr)
			}
			if back.Code != 0 {
				t.Fatalf("render the export: %d %s", back.Code, back.Stderr)
			}
			// Every request of the user's that the client's summary stood
			// in for is read again (the client's own system and reminder
			// lines are never exported).
			text := cliRun(t, env, false, "render", out.Output)
			kept := map[string]bool{}
			for _, id := range strings.Fields(compacted.Stdout) {
				kept[id] = true
			}
			covered := 0
			for _, line := range strings.Split(strings.TrimSpace(raw.Stdout), "\n") {
				var n struct {
					ID      string          `json:"id"`
					Role    string          `json:"role"`
					Content json.RawMessage `json:"content"`
				}
				var plain string
				if json.Unmarshal([]byte(line), &n) != nil || n.Role != "user" || kept[n.ID] {
					continue
				}
				if json.Unmarshal(n.Content, &plain) != nil {
					var blocks []struct{ Text string }
					_ = json.Unmarshal(n.Content, &blocks)
					for _, b := range blocks {
						plain += b.Text
					}
				}
				if plain = strings.TrimSpace(plain); plain == "" || strings.HasPrefix(plain, "<") {
					continue
				}
				covered++
				if !strings.Contains(text.Stdout, plain[:min(40, len(plain))]) {
					t.Errorf("the covered request %q is not in what the client resumes", plain)
				}
			}
			if covered == 0 {
				t.Fatalf("no covered request to check: %s", compacted.Stdout)
			}
			if strings.Contains(back.Stdout, "summary_") {
				t.Errorf("the export still carries a summary: %s", back.Stdout)
			}
			// Nor the client's summary as a turn (Codex records its
			// compaction request's answer before the compacted record).
			if exported, _ := os.ReadFile(out.Output); bytes.Contains(exported, []byte(c.clientSummary)) {
				t.Errorf("the export carries the client's summary %q", c.clientSummary)
			}
		})
	}
}

func TestUncompactFileRefusals(t *testing.T) {
	env := map[string]string{"HOME": t.TempDir(), "XDG_CACHE_HOME": t.TempDir(), "CLAUDE_CONFIG_DIR": t.TempDir()}
	plain := copyTranscript(t, "../testdata/interop/claude-code/2.1.328/chat/transcript/00000000-0000-4000-8000-000000000001.jsonl")
	file := copyTranscript(t, ccCompacted)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"uncompact", plain, "--export", "claude-code"}, 2, "holds no compaction"},
		{[]string{"uncompact", file, "--export", "aider"}, 2, "claude-code, codex or gemini"},
		{[]string{"uncompact", file, "--export", "claude-code", "--keep-tokens", "200"}, 2, "--keep-tokens goes with --recompact"},
		{[]string{"uncompact", file, "--export", "claude-code", "--recompact", "--summarizer", "exec"}, 2, "needs --summarizer-cmd"},
		{[]string{"uncompact", file}, 6, "ctxfold import"},
		{[]string{"uncompact", file, "--export", "claude-code", "--window", "3000"}, 5, "over the model's input budget"},
	} {
		r := cliRun(t, env, false, c.args...)
		if r.Code != c.code || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("%v: exit %d %q; want %d and %q", c.args[2:], r.Code, r.Stderr, c.code, c.want)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(env["CLAUDE_CONFIG_DIR"], "projects", "*", "*.jsonl")); len(m) != 0 {
		t.Errorf("a refused uncompact wrote %v", m)
	}
}

// TestUncompactFileRecompact: --recompact puts ctxfold's summary in place
// of the client's before the export: the new session carries a summary
// that is not the client's, every fact the client's summary dropped that
// ctxfold's keeps is in what the client resumes, and it is smaller than
// the whole history handed back. The original is untouched.
func TestUncompactFileRecompact(t *testing.T) {
	for _, c := range []struct{ client, src, homeVar string }{
		{"claude-code", ccCompacted, "CLAUDE_CONFIG_DIR"},
		{"codex", codexCompacted, "CODEX_HOME"},
		{"gemini", geminiCompressed, "GEMINI_CLI_HOME"},
	} {
		t.Run(c.client, func(t *testing.T) {
			file := copyTranscript(t, c.src)
			original, _ := os.ReadFile(file)
			env := map[string]string{"HOME": t.TempDir(), "XDG_CACHE_HOME": t.TempDir(), c.homeVar: t.TempDir()}
			client := cliRun(t, env, false, "render", file, "--format", "ids")
			var out struct {
				Output    string `json:"output"`
				Recompact struct {
					SummaryID     string `json:"summary_id"`
					ClientDropped int    `json:"client_dropped"`
					Kept          int    `json:"kept_of_client_dropped"`
					StillMissing  []struct {
						Text string `json:"text"`
					} `json:"still_missing"`
				} `json:"recompact"`
			}
			r := cliRun(t, env, false, "uncompact", file, "--export", c.client, "--recompact", "--keep-tokens", "200", "--json")
			if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil || r.Code != 0 || out.Recompact.SummaryID == "" {
				t.Fatalf("exit %d %v: %s %s", r.Code, err, r.Stdout, r.Stderr)
			}
			whole := cliRun(t, env, false, "uncompact", file, "--export", c.client, "--json")
			var wout struct{ Output string }
			_ = json.Unmarshal([]byte(whole.Stdout), &wout)
			ids := cliRun(t, env, false, "render", out.Output, "--format", "ids")
			if !strings.Contains(ids.Stdout, "summary_") {
				t.Fatalf("the recompacted export carries no summary: %s", ids.Stdout)
			}
			for _, id := range strings.Fields(client.Stdout) {
				if strings.HasPrefix(id, "summary_") && strings.Contains(ids.Stdout, id) {
					t.Errorf("the client's summary %s is still what stands in", id)
				}
			}
			if out.Recompact.Kept+len(out.Recompact.StillMissing) != out.Recompact.ClientDropped {
				t.Errorf("kept %d + missing %d != dropped %d", out.Recompact.Kept, len(out.Recompact.StillMissing), out.Recompact.ClientDropped)
			}
			view := cliRun(t, env, false, "render", out.Output).Stdout
			for _, f := range out.Recompact.StillMissing {
				if strings.Contains(view, f.Text) {
					t.Errorf("a fact reported missing is read: %q", f.Text)
				}
			}
			full := cliRun(t, env, false, "estimate", wout.Output, "--json", "--window", "1000000").Stdout
			small := cliRun(t, env, false, "estimate", out.Output, "--json", "--window", "1000000").Stdout
			// The Gemini recording is five short turns: a summary with its
			// snapshot and acknowledgement saves nothing there.
			if c.client != "gemini" && total(t, small) >= total(t, full) {
				t.Errorf("the recompacted export (%d tokens) is not smaller than the whole history (%d)", total(t, small), total(t, full))
			}
			if now, _ := os.ReadFile(file); !bytes.Equal(now, original) {
				t.Errorf("the original transcript changed")
			}
		})
	}
}

func total(t *testing.T, estimateJSON string) int {
	t.Helper()
	var e struct{ Total int }
	if err := json.Unmarshal([]byte(estimateJSON), &e); err != nil {
		t.Fatalf("estimate --json: %v: %s", err, estimateJSON)
	}
	return e.Total
}
