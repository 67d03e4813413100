package cmd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/report"
)

// --json follows the README's contract: schema_version as every command,
// keys sorted, the cache session under "session", and the window with its
// source (issue 29 item 5, issue 27 item 3).
func TestStatuslineJSONContract(t *testing.T) {
	cache := t.TempDir()
	tr := claudeInteropTranscripts(t)
	for _, c := range []struct{ extra, source string }{
		{`,"context_window":{"context_window_size":1000000}`, "client"},
		{"", "table"},
	} {
		r := statusRun(t, cache, nil, statusHookJSON(t, tr["tool"], "Sonnet 4.5", c.extra), "--json")
		line := strings.TrimSuffix(r.Stdout, "\n")
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil || r.Code != 0 {
			t.Fatalf("--json: %v exit %d %q", err, r.Code, r.Stdout)
		}
		if v, _ := obj["schema_version"].(float64); int(v) != report.SchemaVersion {
			t.Errorf("schema_version %v, want %d", obj["schema_version"], report.SchemaVersion)
		}
		if _, ok := obj["cache_session"]; ok {
			t.Errorf("cache_session still present: %s", line)
		}
		if s, _ := obj["session"].(string); s == "" {
			t.Errorf("no session: %s", line)
		}
		if obj["window_source"] != c.source {
			t.Errorf("window_source %v, want %s: %s", obj["window_source"], c.source, line)
		}
		keys := jsonKeyOrder(t, line)
		if !sort.StringsAreSorted(keys) {
			t.Errorf("keys not sorted: %v", keys)
		}
	}
}

// jsonKeyOrder is the top-level keys of obj in the order written.
func jsonKeyOrder(t *testing.T, obj string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(obj))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// Before the first turn the transcript does not exist yet: the model and
// 0%, an empty bar, no placeholder (issue 29 item 6, issue 27 item 3).
func TestStatuslineStartOfSession(t *testing.T) {
	cache := t.TempDir()
	missing := filepath.Join(t.TempDir(), "not-yet.jsonl")
	hook := statusHookJSON(t, missing, "Sonnet 4.5", "")
	r := statusRun(t, cache, map[string]string{"NO_COLOR": "1"}, hook)
	if r.Code != 0 || r.Stdout != "Sonnet 4.5 ░░░░░░░░ 0% 0/200k ↻0 80→80%\n" {
		t.Errorf("start of session: exit %d %q", r.Code, r.Stdout)
	}
	r = statusRun(t, cache, nil, hook, "--json")
	var st StatusLine
	if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil {
		t.Fatal(err)
	}
	if st.Model != "claude-sonnet-4-5" || st.Tokens != 0 || st.Pct != 0 || st.Window != 200000 || st.Update != "none" || st.WindowSource != "table" {
		t.Errorf("start of session: %+v", st)
	}
}

// The bar fills a cell per eighth, rounded: 0% and 1.45% are empty (one
// cell would read as 12.5%).
func TestStatuslineBarCells(t *testing.T) {
	pal := statusPalette(quietStreams())
	for pct, want := range map[float64]string{0: "░░░░░░░░", 1.45: "░░░░░░░░", 6.3: "█░░░░░░░", 12.5: "█░░░░░░░", 50: "████░░░░", 100: "████████", 130: "████████"} {
		if got := statusBar(pal, pct, 8); got != want {
			t.Errorf("bar at %v%%: %q, want %q", pct, got, want)
		}
	}
}

// After /clear the transcript holds a few lines but the next request
// carries the client's prompt prefix: the status line adds the prefix
// the latest calibrated session in the same folder inferred.
func TestStatuslineAfterClearCarriesPrefix(t *testing.T) {
	cache := t.TempDir()
	tr := claudeInteropTranscripts(t)
	before := statusRun(t, cache, nil, statusHookJSON(t, tr["tool"], "Sonnet 4.5", ""), "--json")
	var cal StatusLine
	if err := json.Unmarshal([]byte(before.Stdout), &cal); err != nil || cal.Basis != "calibrated" {
		t.Fatalf("calibrated session: %v %q", err, before.Stdout)
	}
	// The cleared session: its first user line, no reply yet.
	fresh := filepath.Join(t.TempDir(), "cleared.jsonl")
	writeFirstUserLine(t, tr["chat"], fresh)
	r := statusRun(t, cache, nil, statusHookJSON(t, fresh, "Sonnet 4.5", ""), "--json")
	var st StatusLine
	if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil {
		t.Fatalf("%v %q", err, r.Stdout)
	}
	if st.Basis != "inferred_prefix" || st.PrefixTokens <= 0 || st.Tokens != st.RawTokens+st.PrefixTokens {
		t.Errorf("after /clear: %+v (calibrated session inferred %d unrecorded)", st, cal.Tokens-cal.RawTokens)
	}
	// The prefix remembered from a whole transcript is what its first
	// request carried beside the transcript (issue 41).
	est := runEnv(t, cliEnv{Env: map[string]string{"XDG_CACHE_HOME": cache}}, "estimate", tr["tool"], "--nodes", "--json")
	var res struct {
		Calibration struct {
			Prefix  int `json:"prefix_tokens"`
			History []struct {
				Estimated int `json:"estimated"`
				Measured  int `json:"measured"`
			} `json:"history"`
		} `json:"calibration"`
	}
	if err := json.Unmarshal([]byte(est.Stdout), &res); err != nil || cal.Read != "full" || len(res.Calibration.History) == 0 {
		t.Fatalf("estimate %v %q (status read %s)", err, est.Stdout, cal.Read)
	}
	c := res.Calibration
	first := c.History[0].Measured - c.History[0].Estimated
	if first <= 0 || st.PrefixTokens != first || first == c.Prefix {
		t.Errorf("remembered %d; the calibrated session's first request left %d unrecorded (prefix_tokens %d)", st.PrefixTokens, first, c.Prefix)
	}
}

func writeFirstUserLine(t *testing.T, src, dst string) {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	var keep []string
	for sc.Scan() {
		keep = append(keep, sc.Text())
		if strings.Contains(sc.Text(), `"type":"user"`) {
			break
		}
	}
	if err := os.WriteFile(dst, []byte(strings.Join(keep, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Issue 30 item 11: what comes from the hook or the transcript cannot
// drive the terminal — not in the log, not through --format — an unknown
// model id falls back to the transcript's model, and a 500 KB id is
// answered at once.
func TestStatuslineHygiene(t *testing.T) {
	tr := claudeInteropTranscripts(t)
	t.Run("log", func(t *testing.T) {
		cache := t.TempDir()
		p, _ := json.Marshal("/nonexistent/\x1b]0;pwned\x07\x1b[2J.jsonl")
		statusRun(t, cache, nil, `{"transcript_path":`+string(p)+`}`)
		log, err := os.ReadFile(filepath.Join(cache, "ctxfold", "statusline.log"))
		if err != nil || !strings.Contains(string(log), "nonexistent") {
			t.Fatalf("log %q: %v", log, err)
		}
		if strings.ContainsAny(string(log), "\x1b\x07") {
			t.Errorf("raw control characters in the log: %q", log)
		}
	})
	t.Run("format", func(t *testing.T) {
		cache := t.TempDir()
		hook := statusHookJSON(t, tr["tool"], "Evil\x1b[8m hidden \u202ereversed", "")
		r := statusRun(t, cache, nil, hook, "--format", "{{.DisplayName}} {{.File}}")
		if strings.ContainsAny(r.Stdout, "\x1b\u202e") || !strings.Contains(r.Stdout, "Evil") {
			t.Errorf("--format passed content controls: %q", r.Stdout)
		}
	})
	t.Run("unknown model id", func(t *testing.T) {
		cache := t.TempDir()
		hook := strings.Replace(statusHookJSON(t, tr["tool"], "", ""), `"claude-sonnet-4-5"`, `"zz-house-model-q"`, 1)
		r := statusRun(t, cache, map[string]string{"NO_COLOR": "1"}, hook, "--json")
		var st StatusLine
		if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil || !strings.HasPrefix(st.Model, "claude-") {
			t.Errorf("unknown hook model: %v %q", err, r.Stdout)
		}
	})
	t.Run("500 KB model id", func(t *testing.T) {
		cache := t.TempDir()
		id := strings.Repeat("claude-opus-", 500_000/12)
		hook := strings.Replace(statusHookJSON(t, tr["tool"], "", ""), `"claude-sonnet-4-5"`, `"`+id+`"`, 1)
		start := time.Now()
		r := statusRun(t, cache, map[string]string{"NO_COLOR": "1"}, hook)
		// A bound, not a speed target: unbounded, the name search took
		// seconds (5.4 s measured); bounded it is milliseconds.
		if d := time.Since(start); d > 3*time.Second || r.Stdout == statusPlaceholder+"\n" {
			t.Errorf("500 KB model id: %v, %q", d, r.Stdout)
		}
	})
}

// Issue 41: before the first reply, with no prefix remembered for the
// folder, the status line adds the prior of the client (estimate's table
// of what Claude Code sends beside the transcript, docs/ACCURACY.md "The
// prior"), and keeps it when the transcript grows before any usage.
func TestStatuslineFirstRequestUsesThePrior(t *testing.T) {
	cache := t.TempDir()
	tr := claudeInteropTranscripts(t)
	fresh := filepath.Join(t.TempDir(), "fresh.jsonl")
	writeFirstUserLine(t, tr["chat"], fresh)
	// Nothing called yet, and the recording's entrypoint (sdk-cli) says a
	// program started it: the recording harness's setup (estimate.PriorFor).
	p, ok := estimate.LookupPrior("claude-code", "2.1.328", estimate.PriorMain, estimate.PriorHarness)
	if !ok {
		t.Fatal("no Claude Code prior")
	}
	want := p.Unrecorded(estimate.ProviderAnthropic, 0, false)
	for run := range 2 {
		r := statusRun(t, cache, nil, statusHookJSON(t, fresh, "Sonnet 4.5", ""), "--json")
		var st StatusLine
		if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil {
			t.Fatalf("%v %q", err, r.Stdout)
		}
		if st.Basis != "calibrated" || st.Tokens != st.RawTokens+want || st.PrefixTokens != 0 {
			t.Errorf("run %d before the first reply: %+v, want the raw count + %d (%s)", run, st, want, p.Method)
		}
		// A second user line, still no reply: the stored view is extended.
		f, err := os.OpenFile(fresh, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, `{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"And one more thing."},"uuid":"00000000-0000-4000-8000-0000000000f%d","timestamp":"2026-01-01T00:00:30.000Z","sessionId":"00000000-0000-4000-8000-000000000001","version":"2.1.328","entrypoint":"sdk-cli"}`+"\n", run)
		f.Close()
	}
}
