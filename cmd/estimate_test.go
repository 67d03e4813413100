package cmd

import (
	"context"
	"unicode/utf8"

	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/report"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
)

func TestEstimateExitCodes(t *testing.T) {
	tools, compacted := sessiontest.CopyFixture(t, "tools"), sessiontest.CopyFixture(t, "compacted")
	noModel := t.TempDir()
	os.WriteFile(filepath.Join(noModel, "session.json"), []byte(`{"format_version":1,"head":"u"}`), 0o644)
	os.WriteFile(filepath.Join(noModel, "nodes.jsonl"), []byte(`{"id":"u","predecessor":null,"role":"user","content":"hi"}`+"\n"), 0o644)
	bad := unreadableSession(t)
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"ok", []string{tools}, 0},
		{"ok json", []string{"--json", tools}, 0},
		{"several", []string{tools, compacted}, 0},
		{"fail-above exceeded", []string{tools, "--fail-above", "0.5"}, 1},
		{"fail-above exceeded json", []string{tools, "--fail-above", "0.5", "--json"}, 1},
		{"fail-above zero", []string{tools, "--fail-above", "0"}, 1},
		{"fail-above not reached", []string{tools, "--fail-above", "80"}, 0},
		{"fail-above one of two", []string{compacted, tools, "--fail-above", "0.1"}, 1},
		{"unknown model", []string{tools, "--model", "gpt-4x"}, 2},
		{"unknown model with window", []string{tools, "--model", "gpt-4x", "--window", "8192"}, 0},
		{"no model anywhere", []string{noModel}, 2},
		{"no model but window", []string{noModel, "--window", "8192"}, 0},
		{"bad encoding", []string{tools, "--encoding", "p50k_base"}, 2},
		{"negative window", []string{tools, "--window", "-1"}, 2},
		{"cap fills window", []string{tools, "--window", "1000", "--output-cap", "1000"}, 2},
		{"bad compact-at", []string{tools, "--compact-at", "0"}, 2},
		{"negative fail-above", []string{tools, "--fail-above", "-3"}, 2},
		{"head", []string{compacted, "--head", "a4x"}, 0},
		{"no such head", []string{compacted, "--head", "nope"}, 2},
		{"head on a summary", []string{compacted, "--head", "summary_second"}, 2},
		{"head with two sessions", []string{tools, compacted, "--head", "a1"}, 2},
		{"unreadable", []string{bad}, 2},
		{"unreadable among good", []string{tools, bad, compacted}, 2},
		{"error beats fail-above", []string{tools, bad, "--fail-above", "0.1"}, 2},
		{"no such dir", []string{filepath.Join(t.TempDir(), "nope")}, 2},
		{"no args", nil, 2},
	} {
		r := cliRun(t, nil, false, append([]string{"estimate"}, tc.args...)...)
		if r.Code != tc.code {
			t.Errorf("%s: exit %d, want %d\nstdout %s\nstderr %s", tc.name, r.Code, tc.code, r.Stdout, r.Stderr)
		}
		if strings.Contains(r.Stderr, "goroutine ") {
			t.Errorf("%s: stack trace on stderr", tc.name)
		}
	}
}

func TestEstimateSeveralSessionsKeepGoing(t *testing.T) {
	tools, compacted := sessiontest.CopyFixture(t, "tools"), sessiontest.CopyFixture(t, "compacted")
	bad := unreadableSession(t)
	r := cliRun(t, nil, false, "estimate", "--json", "--no-calibrate", tools, bad, compacted)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	// One object per argument, the unreadable one included (as verify).
	if r.Code != 2 || len(lines) != 3 {
		t.Fatalf("exit %d, %d lines:\n%s\nstderr %s", r.Code, len(lines), r.Stdout, r.Stderr)
	}
	mid := decodeJSON(t, lines[1])
	if decodeJSON(t, lines[0])["session"] != tools || mid["session"] != bad || decodeJSON(t, lines[2])["session"] != compacted {
		t.Errorf("sessions out of argument order:\n%s", r.Stdout)
	}
	if msg, _ := mid["read_error"].(string); msg == "" || mid["schema_version"] == nil || mid["total"] != nil {
		t.Errorf("the unreadable session's object: %v", mid)
	}
	if !strings.HasPrefix(r.Stderr, "ctxfold: error: ") || strings.Count(r.Stderr, "ctxfold: error:") != 1 {
		t.Errorf("stderr %q", r.Stderr)
	}
	one := cliRun(t, nil, false, "estimate", "--json", bad)
	if one.Code != 2 || decodeJSON(t, strings.TrimSpace(one.Stdout))["read_error"] == nil || strings.Count(one.Stderr, "ctxfold: error:") != 1 {
		t.Errorf("one unreadable session: exit %d\n%s\nstderr %s", one.Code, one.Stdout, one.Stderr)
	}
}

func TestEstimateTTYAndPiped(t *testing.T) {
	tools := sessiontest.CopyFixture(t, "tools")
	tty := cliRun(t, nil, true, "estimate", tools, "--nodes")
	if tty.Code != 0 {
		t.Fatalf("exit %d: %s", tty.Code, tty.Stderr)
	}
	for _, want := range []string{"│ category             │ tokens │  share │", "│ tool results", "│ total", "] 0.7% of the 128,000 window · 0.8% of the 111,616 input budget (reserve 16,384, calibrated)",
		"should compact: no (at 80% of the input budget)", "calibrated estimate: 881 tokens", "+ unrecorded prefix (inferred from recorded usage): 222 tokens",
		"+ framing since the latest request (1.43 a framing token, fitted on recorded usage): 4 tokens", "o200k_base (exact)", "│ a7  ", "\x1b[32m█\x1b[0m"} {
		if !strings.Contains(tty.Stdout, want) {
			t.Errorf("TTY output lacks %q:\n%s", want, tty.Stdout)
		}
	}
	if strings.Contains(tty.Stdout, "│ images") {
		t.Errorf("TTY table shows an empty category:\n%s", tty.Stdout)
	}
	noColor := cliRun(t, map[string]string{}, true, "estimate", tools, "--color", "never")
	if strings.Contains(noColor.Stdout, "\x1b[") {
		t.Errorf("--color never still colours:\n%s", noColor.Stdout)
	}
	piped := cliRun(t, nil, false, "estimate", tools, "--nodes")
	if strings.Contains(piped.Stdout, "\x1b[") || strings.Contains(piped.Stdout, "│") {
		t.Errorf("piped output has colour or borders:\n%s", piped.Stdout)
	}
	for _, want := range []string{"session\t" + tools + "\n", "category\ttool_results\t218\n", "total\t661\n", "node\ta7\tassistant\tassistant\t24\t27\n", "calibrated_total\t881\n", "budget_basis\tcalibrated\n", "calibration_unrecorded_tokens\t222\n", "calibration_framing_tokens\t4\n"} {
		if !strings.Contains(piped.Stdout, want) {
			t.Errorf("piped output lacks %q:\n%s", want, piped.Stdout)
		}
	}
}

// TestEstimateGatesSwitchWithNoCalibrate: the gates read the calibrated
// total, and --no-calibrate puts them back on the raw one.
func TestEstimateGatesSwitchWithNoCalibrate(t *testing.T) {
	tools := sessiontest.CopyFixture(t, "tools")
	// Raw 661 tokens = 0.592% of 111,616; calibrated 881 = 0.789%.
	cal := cliRun(t, nil, false, "estimate", tools, "--fail-above", "0.7")
	if cal.Code != 1 || !strings.Contains(cal.Stderr, "(calibrated) ≥ --fail-above 0.7%") {
		t.Fatalf("calibrated gate: exit %d: %s", cal.Code, cal.Stderr)
	}
	raw := cliRun(t, nil, false, "estimate", tools, "--fail-above", "0.7", "--no-calibrate")
	if raw.Code != 0 || !strings.Contains(raw.Stdout, "budget_basis\traw\n") || !strings.Contains(raw.Stdout, "budget_pct\t0.59\n") {
		t.Fatalf("raw gate: exit %d: %s %s", raw.Code, raw.Stdout, raw.Stderr)
	}
	tty := cliRun(t, nil, true, "estimate", tools, "--no-calibrate")
	if !strings.Contains(tty.Stdout, "(reserve 16,384, raw)") || strings.Contains(tty.Stdout, "unrecorded prefix") {
		t.Fatalf("--no-calibrate TTY:\n%s", tty.Stdout)
	}
	// compact --if-above and the graph header read the same figure.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"compact", tools, "--if-above", "0.7", "--dry-run", "--json"}, `"budget_basis":"calibrated"`},
		{[]string{"compact", tools, "--if-above", "0.7", "--dry-run", "--json", "--no-calibrate"}, `"reason":"below_threshold"`},
		{[]string{"graph", tools, "--format", "html"}, `"basis":"calibrated"`},
		{[]string{"graph", tools, "--format", "html", "--no-calibrate"}, `"basis":"raw"`},
	} {
		r := cliRun(t, nil, false, c.args...)
		if r.Code != 0 || !strings.Contains(r.Stdout, c.want) {
			t.Errorf("%v: exit %d, want %s in:\n%.400s\n%s", c.args, r.Code, c.want, r.Stdout, r.Stderr)
		}
	}
	below := cliRun(t, nil, false, "compact", tools, "--if-above", "0.7", "--dry-run", "--json")
	if strings.Contains(below.Stdout, "below_threshold") {
		t.Errorf("calibrated 0.79%% is above --if-above 0.7: %s", below.Stdout)
	}
}

func TestEstimateBarColour(t *testing.T) {
	tools := sessiontest.CopyFixture(t, "tools")
	// total 661: a window of 1000 is 66% (yellow), 800 is 83% (red), 2000 is 33% (green).
	for window, code := range map[string]string{"2000": "32", "1000": "33", "800": "31"} {
		r := cliRun(t, nil, true, "estimate", tools, "--window", window, "--output-cap", "1", "--no-calibrate")
		if !strings.Contains(r.Stdout, "[\x1b["+code+"m█") {
			t.Errorf("window %s: bar not coloured %s:\n%s", window, code, r.Stdout)
		}
	}
}

// TestEstimateTTYFitsTheTerminal: at 80 columns no line of the terminal
// table is longer than the terminal (the terminal would wrap it mid-word);
// long lines wrap at spaces instead, and no word is lost.
func TestEstimateTTYFitsTheTerminal(t *testing.T) {
	tools := sessiontest.CopyFixture(t, "tools")
	for _, width := range []int{80, 60} {
		ios, _, out, errOut := report.Test()
		ios.StdoutTTY, ios.StderrTTY, ios.TerminalWidth = true, true, width
		f := &Factory{IO: ios, Getenv: func(k string) string {
			if k == "XDG_CONFIG_HOME" {
				return tools + "-config"
			}
			return ""
		}}
		if code := Run(context.Background(), f, []string{"estimate", tools}); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		text := stripSGR(out.String())
		for _, line := range strings.Split(text, "\n") {
			if n := utf8.RuneCountInString(line); n > width {
				t.Errorf("width %d: a %d-column line:\n%s", width, n, line)
			}
		}
		for _, word := range []string{"calibrated", "estimate:", "median", "worst", "should", "compact:"} {
			if !strings.Contains(text, word) {
				t.Errorf("width %d: %q lost:\n%s", width, word, text)
			}
		}
	}
}

// estimate --tail answers a transcript file with the calibrated figures
// estimate FILE gives (from its tail: read "tail"), a format without a
// tail session through the whole file (read "full"), and gates on
// --fail-above like estimate.
func TestEstimateTail(t *testing.T) {
	file := transcriptFile(t)
	cache := t.TempDir()
	env := map[string]string{"XDG_CACHE_HOME": cache}
	tail := runEnv(t, cliEnv{Env: env}, "estimate", "--tail", "--json", file)
	full := runEnv(t, cliEnv{Env: env}, "estimate", "--json", file)
	if tail.Code != 0 || full.Code != 0 {
		t.Fatalf("exit %d and %d: %s %s", tail.Code, full.Code, tail.Stderr, full.Stderr)
	}
	ta, fu := decodeJSON(t, tail.Stdout), decodeJSON(t, full.Stdout)
	cal := fu["calibration"].(map[string]any)
	if ta["read"] != "tail" || ta["tokens"] != cal["calibrated_total"] || ta["budget_pct"] != fu["budget_pct"] || ta["raw_tokens"] != 0.0 {
		t.Errorf("--tail: %v\nwhole: tokens %v, budget_pct %v", ta, cal["calibrated_total"], fu["budget_pct"])
	}
	if ta["compactions"] != 1.0 {
		t.Errorf("compactions %v; the recording holds one", ta["compactions"])
	}
	codex := "../testdata/interop/codex/0.169.0/chat/rollout-2026-01-01T00-00-00-00000000-0000-7000-8000-000000000001.jsonl"
	r := runEnv(t, cliEnv{Env: env}, "estimate", "--tail", "--json", codex)
	if c := decodeJSON(t, r.Stdout); r.Code != 0 || c["read"] != "full" || c["raw_tokens"] == 0.0 {
		t.Errorf("a Codex rollout: exit %d %v", r.Code, c)
	}
	if r := runEnv(t, cliEnv{Env: env}, "estimate", "--tail", "--fail-above", "0.1", file); r.Code != ExitCheckFailed || !strings.Contains(r.Stderr, "≥ --fail-above 0.1%") {
		t.Errorf("--fail-above 0.1: exit %d, stderr %q", r.Code, r.Stderr)
	}
	if r := runEnv(t, cliEnv{Env: env}, "estimate", "--tail", file); r.Code != 0 || !strings.Contains(r.Stdout, "read from its tail (from byte 0); compactions: 1") {
		t.Errorf("text: exit %d\n%s", r.Code, r.Stdout)
	}
}
