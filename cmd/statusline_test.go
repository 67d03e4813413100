package cmd

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxfold/ctxfold/report"
)

var updateStatusGolden = flag.Bool("update-statusline", false, "rewrite cmd/testdata/statusline.golden")

// statusHookJSON is Claude Code's statusLine input for transcript.
func statusHookJSON(t *testing.T, transcript, display string, extra string) string {
	t.Helper()
	abs, err := filepath.Abs(transcript)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := json.Marshal(abs)
	d, _ := json.Marshal(display)
	return fmt.Sprintf(`{"session_id":"s1","transcript_path":%s,"cwd":"/tmp","model":{"id":"claude-sonnet-4-5","display_name":%s}%s}`, p, d, extra)
}

func claudeInteropTranscripts(t *testing.T) map[string]string {
	t.Helper()
	m, err := filepath.Glob("../testdata/interop/claude-code/2.1.328/*/transcript/*.jsonl")
	if err != nil || len(m) == 0 {
		t.Fatalf("no Claude Code interop transcripts: %v", err)
	}
	out := map[string]string{}
	for _, p := range m {
		out[filepath.Base(filepath.Dir(filepath.Dir(p)))] = p
	}
	return out
}

// statusTailAndFull is the status line's JSON for hook read from the
// transcript's tail (--tail-min-bytes 1) and from the whole file
// (--tail-min-bytes 0), each in a fresh cache.
func statusTailAndFull(t *testing.T, hook string) (tail, full StatusLine) {
	t.Helper()
	for _, c := range []struct {
		arg string
		st  *StatusLine
	}{{"1", &tail}, {"0", &full}} {
		r := statusRun(t, t.TempDir(), nil, hook, "--json", "--tail-min-bytes", c.arg)
		if err := json.Unmarshal([]byte(r.Stdout), c.st); err != nil {
			t.Fatalf("--tail-min-bytes %s: %v\n%s", c.arg, err, r.Stdout)
		}
	}
	return tail, full
}

func statusRun(t *testing.T, cache string, env map[string]string, stdin string, args ...string) cliResult {
	t.Helper()
	e := map[string]string{"XDG_CACHE_HOME": cache}
	for k, v := range env {
		e[k] = v
	}
	return runEnv(t, cliEnv{Stdin: stdin, Env: e}, append([]string{"statusline"}, args...)...)
}

// The line for every real Claude Code transcript, coloured and not, is
// the golden file's; a second run (the cache unchanged) prints the same.
func TestStatuslineGolden(t *testing.T) {
	cache := t.TempDir()
	tr := claudeInteropTranscripts(t)
	var got strings.Builder
	for _, name := range []string{"chat", "compact", "fork", "parallel", "resume", "subagent", "tool"} {
		hook := statusHookJSON(t, tr[name], "Sonnet 4.5", "")
		plain := statusRun(t, cache, map[string]string{"NO_COLOR": "1"}, hook)
		colour := statusRun(t, cache, nil, hook)
		again := statusRun(t, cache, map[string]string{"NO_COLOR": "1"}, hook)
		for _, r := range []cliResult{plain, colour, again} {
			if r.Code != 0 || r.Stderr != "" {
				t.Fatalf("%s: exit %d, stderr %q", name, r.Code, r.Stderr)
			}
		}
		if again.Stdout != plain.Stdout {
			t.Errorf("%s: second run %q, first %q", name, again.Stdout, plain.Stdout)
		}
		if strings.Contains(plain.Stdout, "\x1b") {
			t.Errorf("%s: NO_COLOR line has escapes: %q", name, plain.Stdout)
		}
		fmt.Fprintf(&got, "%s\t%s%s\t%q\n", name, plain.Stdout, name, colour.Stdout)
	}
	// Small windows: the yellow and red bands, and past --compact-at.
	for _, w := range []string{"10000", "9000", "7000"} {
		hook := statusHookJSON(t, tr["compact"], "Sonnet 4.5", "")
		plain := statusRun(t, cache, map[string]string{"NO_COLOR": "1"}, hook, "--window", w)
		colour := statusRun(t, cache, nil, hook, "--window", w)
		fmt.Fprintf(&got, "window %s\t%swindow %s\t%q\n", w, plain.Stdout, w, colour.Stdout)
	}
	golden := filepath.Join("testdata", "statusline.golden")
	if *updateStatusGolden {
		if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("statusline output differs from %s (go test ./cmd -run TestStatuslineGolden -update-statusline)\ngot:\n%s\nwant:\n%s", golden, got.String(), want)
	}
}

// Whatever the width, the model name or the client's figures, the output
// is one line of at most --width columns.
func TestStatuslineWidth(t *testing.T) {
	cache := t.TempDir()
	tr := claudeInteropTranscripts(t)
	for _, width := range []int{20, 30, 40, 80} {
		for _, display := range []string{"", "Opus 4.1", "A very long model display name (1M context)\x1b[31m"} {
			hook := statusHookJSON(t, tr["tool"], display, `,"context_window":{"context_window_size":1000000,"used_percentage":2.5}`)
			r := statusRun(t, cache, map[string]string{"NO_COLOR": "1"}, hook, "--width", fmt.Sprint(width))
			line, ok := strings.CutSuffix(r.Stdout, "\n")
			if r.Code != 0 || !ok || strings.Contains(line, "\n") {
				t.Fatalf("width %d %q: exit %d, not one line: %q", width, display, r.Code, r.Stdout)
			}
			if n := utf8.RuneCountInString(line); n > width {
				t.Errorf("width %d %q: %d columns: %q", width, display, n, line)
			}
			if strings.ContainsAny(line, "\x1b\x00") {
				t.Errorf("control characters in %q", line)
			}
			if width >= 40 && !strings.Contains(line, "%") {
				t.Errorf("width %d: no occupancy in %q", width, line)
			}
			if width >= 40 && !strings.Contains(line, "/1.0M") {
				t.Errorf("width %d: the client's window is not used: %q", width, line)
			}
		}
	}
}

// Every failure prints the placeholder, exits 0 and is logged.
func TestStatuslineNeverFails(t *testing.T) {
	tr := claudeInteropTranscripts(t)
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, stdin string
		args        []string
		logged      string
	}{
		{"no stdin", "", nil, "hook JSON"},
		{"not json", "garbage", nil, "hook JSON"},
		{"no transcript", `{"model":{"id":"x"}}`, nil, "transcript_path"},
		{"missing file", `{"transcript_path":"/nonexistent/x.jsonl"}`, nil, "no such file"},
		{"malformed transcript", statusHookJSON(t, bad, "", ""), nil, "bad.jsonl"},
		{"bad flag", statusHookJSON(t, tr["chat"], "", ""), []string{"--bogus"}, "unknown flag"},
		{"bad template", statusHookJSON(t, tr["chat"], "", ""), []string{"--format", "{{.Nope}}"}, "--format"},
		{"bad compact-at", statusHookJSON(t, tr["chat"], "", ""), []string{"--compact-at", "0"}, "--compact-at"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cache := t.TempDir()
			r := statusRun(t, cache, nil, c.stdin, c.args...)
			if r.Code != 0 || r.Stdout != statusPlaceholder+"\n" || r.Stderr != "" {
				t.Fatalf("exit %d stdout %q stderr %q", r.Code, r.Stdout, r.Stderr)
			}
			log, err := os.ReadFile(filepath.Join(cache, "ctxfold", "statusline.log"))
			if err != nil || !strings.Contains(string(log), c.logged) {
				t.Errorf("log %q (%v), want it to mention %q", log, err, c.logged)
			}
		})
	}
}

// --format sees the typed fields and the helpers; --json is one object.
func TestStatuslineFormatAndJSON(t *testing.T) {
	cache := t.TempDir()
	tr := claudeInteropTranscripts(t)
	hook := statusHookJSON(t, tr["compact"], "Sonnet 4.5", `,"context_window":{"context_window_size":200000,"used_percentage":4,"current_usage":{"input_tokens":10,"cache_read_input_tokens":5000}}`)
	r := statusRun(t, cache, map[string]string{"NO_COLOR": "1"}, hook, "--json")
	var st StatusLine
	if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil || r.Code != 0 {
		t.Fatalf("--json: %v exit %d %q", err, r.Code, r.Stdout)
	}
	if st.Compactions != 1 || st.ClientTokens != 5010 || st.ClientPct != 4 || st.Window != 200000 || st.Update != "fresh" || st.SchemaVersion != report.SchemaVersion {
		t.Errorf("fields: %+v", st)
	}
	if st.Tokens <= 0 || st.Pct <= 0 || st.ToCompact != st.CompactAt-st.Pct || st.Session == "" || !strings.HasSuffix(st.File, ".jsonl") {
		t.Errorf("figures: %+v", st)
	}
	r = statusRun(t, cache, map[string]string{"NO_COLOR": "1"}, hook, "--format", "{{.DisplayName}}|{{pct .Pct}}|{{short .Tokens}}|{{.Compactions}}|{{bar 4}}|{{.Update}}\nsecond line")
	want := fmt.Sprintf("Sonnet 4.5|%s|%s|1|%s|unchanged\n", pctText(st.Pct), shortCount(st.Tokens), "░░░░")
	if r.Stdout != want {
		t.Errorf("--format: got %q, want %q", r.Stdout, want)
	}
}

// A transcript at least --tail-min-bytes long is answered from its tail
// (read "tail", no raw count) with the number the whole file gives
// (--tail-min-bytes 0); a format without a tail session falls back to the
// whole file. estimate's TestTailEqualsFull checks strict suffixes.
func TestStatuslineTail(t *testing.T) {
	tr := claudeInteropTranscripts(t)
	for _, name := range []string{"compact", "tool", "subagent"} {
		tail, full := statusTailAndFull(t, statusHookJSON(t, tr[name], "Sonnet 4.5", ""))
		if tail.Read != readTail || full.Read != readFull || tail.RawTokens != 0 || full.RawTokens == 0 {
			t.Errorf("%s: read %q (raw %d) and %q (raw %d); want tail without a raw count, then full", name, tail.Read, tail.RawTokens, full.Read, full.RawTokens)
		}
		if tail.Tokens != full.Tokens || tail.Pct != full.Pct || tail.Compactions != full.Compactions || tail.Window != full.Window {
			t.Errorf("%s: tail %d tokens %.2f%% ↻%d, full %d tokens %.2f%% ↻%d", name, tail.Tokens, tail.Pct, tail.Compactions, full.Tokens, full.Pct, full.Compactions)
		}
	}
	codex := "../testdata/interop/codex/0.169.0/chat/rollout-2026-01-01T00-00-00-00000000-0000-7000-8000-000000000001.jsonl"
	r := statusRun(t, t.TempDir(), nil, statusHookJSON(t, codex, "GPT", ""), "--json", "--tail-min-bytes", "1")
	var st StatusLine
	if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil || st.Read != readFull {
		t.Errorf("a Codex rollout: read %q (%v); want the whole file", st.Read, err)
	}
}
