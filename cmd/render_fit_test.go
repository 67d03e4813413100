package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
)

func sessionBytes(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, f := range []string{"session.json", "nodes.jsonl", "events.jsonl"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		out[f] = data
	}
	return out
}

func TestRenderFitAlreadyFitsIsRenderOutput(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "compacted")
	for _, format := range []string{"openai", "anthropic", "text", "ids"} {
		plain := cliRun(t, nil, false, "render", dir, "--format", format)
		fitted := cliRun(t, nil, false, "render", dir, "--fit", "--model", "gpt-4.1", "--format", format)
		if plain.Code != 0 || fitted.Code != 0 {
			t.Fatalf("%s: exit %d / %d: %s %s", format, plain.Code, fitted.Code, plain.Stderr, fitted.Stderr)
		}
		if fitted.Stdout != plain.Stdout {
			t.Fatalf("%s: --fit of a view that fits differs from render:\n%s\n---\n%s", format, fitted.Stdout, plain.Stdout)
		}
	}
}

func TestRenderFitTransformsWithoutWriting(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	before := sessionBytes(t, dir)
	report := filepath.Join(t.TempDir(), "fit.json")
	res := cliRun(t, nil, false, "render", dir, "--fit", "--window", "1200", "--format", "ids", "--json-report", report, "--no-calibrate")
	if res.Code != 0 {
		t.Fatalf("exit %d: %s", res.Code, res.Stderr)
	}
	if !strings.Contains(res.Stdout, "checkpoint_") {
		t.Fatalf("expected a checkpoint in the fitted ids:\n%s", res.Stdout)
	}
	for _, id := range []string{"sys", "u1", "u2", "a6", "t5", "t6", "a7"} {
		if !strings.Contains("\n"+res.Stdout, "\n"+id+"\n") {
			t.Fatalf("protected node %s missing from the fitted request:\n%s", id, res.Stdout)
		}
	}
	rep, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	m := decodeJSON(t, string(rep))
	if m["fitted"] != true || m["schema_version"] == nil || len(m["transformations"].([]any)) == 0 {
		t.Fatalf("bad report: %s", rep)
	}
	after := sessionBytes(t, dir)
	for f := range before {
		if !bytes.Equal(before[f], after[f]) {
			t.Fatalf("render --fit changed %s", f)
		}
	}
}

func TestRenderFitExitCodes(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	for _, tc := range []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"protected content over budget", []string{"render", dir, "--fit", "--window", "600", "--format", "openai", "--no-calibrate"}, 5, "does not fit"},
		// The calibrated prefix leaves no budget: the same error as a
		// window below the output reserve and margin (issue 44 item 11).
		{"calibrated prefix over budget", []string{"render", dir, "--fit", "--window", "600", "--format", "openai"}, 2, "no input budget: window 600 − output reserve 150 − margin 256 − fixed costs"},
		{"explicit output cap above the model's capability", []string{"render", dir, "--fit", "--model", "gpt-4o", "--output-cap", "100000"}, 2, "cannot be honoured"},
		{"fit flag without --fit", []string{"render", dir, "--window", "1000"}, 2, "--window needs --fit"},
		{"jsonl is not a request format", []string{"render", dir, "--fit", "--format", "jsonl"}, 2, "--fit prints"},
		{"unknown model", []string{"render", dir, "--fit", "--model", "gpt-4q"}, 2, "gpt-4q"},
		{"unknown summarizer", []string{"render", dir, "--fit", "--summarizer", "bogus"}, 2, "--summarizer must be extractive, openai or exec"},
		{"exec without a command", []string{"render", dir, "--fit", "--summarizer", "exec"}, 2, "needs --summarizer-cmd"},
		{"a command without exec", []string{"render", dir, "--fit", "--summarizer-cmd", "cat"}, 2, "needs --summarizer exec"},
		{"negative margin", []string{"render", dir, "--fit", "--margin", "-5"}, 2, "want a token count of 0 or more, or auto"},
		{"window leaves no input budget", []string{"render", dir, "--fit", "--window", "10"}, 2, "no input budget: window 10 − output reserve"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := cliRun(t, nil, false, tc.args...)
			if res.Code != tc.code {
				t.Fatalf("exit %d, want %d: %s", res.Code, tc.code, res.Stderr)
			}
			if res.Stdout != "" {
				t.Fatalf("stdout must stay empty on failure, got %q", res.Stdout)
			}
			if !strings.Contains(res.Stderr, tc.err) || strings.Count(strings.TrimSpace(res.Stderr), "\n") > 1 {
				t.Fatalf("stderr %q should be one error line (plus a hint) containing %q", res.Stderr, tc.err)
			}
		})
	}
}

// The fitted OpenAI body, imported back and measured by estimate, is within
// the budget the fit reported: the body a script sends really fits.
func TestRenderFitBodyRecountsWithinBudget(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	tmp := t.TempDir()
	reportFile := filepath.Join(tmp, "fit.json")
	res := cliRun(t, nil, false, "render", dir, "--fit", "--window", "1200", "--format", "openai", "--json-report", reportFile)
	if res.Code != 0 {
		t.Fatalf("fit: exit %d: %s", res.Code, res.Stderr)
	}
	body := filepath.Join(tmp, "body.json")
	if err := os.WriteFile(body, []byte(res.Stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	imported := filepath.Join(tmp, "imported")
	if r := cliRun(t, nil, false, "import", "--from", "openai", body, "-o", imported); r.Code != 0 {
		t.Fatalf("import of the fitted body: exit %d: %s", r.Code, r.Stderr)
	}
	est := cliRun(t, nil, false, "estimate", imported, "--window", "1200", "--json", "--no-calibrate")
	if est.Code != 0 {
		t.Fatalf("estimate: exit %d: %s", est.Code, est.Stderr)
	}
	data, err := os.ReadFile(reportFile)
	if err != nil {
		t.Fatal(err)
	}
	budget := decodeJSON(t, string(data))["input_budget"].(float64)
	total := decodeJSON(t, est.Stdout)["total"].(float64)
	if total > budget || total == 0 {
		t.Fatalf("re-counted fitted body is %v tokens, budget %v", total, budget)
	}
}

// TestRenderFitReportCarriesNoFormOfTheKey: an endpoint echoing the key
// (prefix, upper-cased, base64) in its error; the fit report, stdout and
// stderr show none of them.
func TestRenderFitReportCarriesNoFormOfTheKey(t *testing.T) {
	echo := sessiontest.TestKey[:20] + " " + strings.ToUpper(sessiontest.TestKey) + " " + sessiontest.KeyForms()[3]
	cs := sessiontest.NewChatServer(t, func(int, string) (int, string) {
		return 400, sessiontest.APIError("rejected "+echo, "invalid_request_error", "")
	})
	dir := sessiontest.CopyFixture(t, "tools")
	report := filepath.Join(t.TempDir(), "fit.json")
	env := map[string]string{"CTXFOLD_API_KEY": sessiontest.TestKey}
	res := cliRun(t, env, false, "render", dir, "--fit", "--window", "1200", "--format", "ids", "--summarizer", "openai",
		"--base-url", cs.URL+"/v1", "--summary-model", "summary-model", "--json-report", report)
	rep, _ := os.ReadFile(report)
	if cs.Calls() == 0 || !strings.Contains(string(rep), "[redacted]") {
		t.Fatalf("exit %d, %d calls, report %s, stderr %s", res.Code, cs.Calls(), rep, res.Stderr)
	}
	sessiontest.AssertNoKey(t, dir, res.Stdout, res.Stderr, string(rep))
}

func TestSummarizerBaseURLWithCredentialsIsRefused(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	before := sessionBytes(t, dir)
	env := map[string]string{"CTXFOLD_API_KEY": sessiontest.TestKey}
	for _, args := range [][]string{
		{"compact", dir, "--summarizer", "openai", "--summary-model", "m", "--base-url", "http://u:" + sessiontest.TestKey + "@127.0.0.1:1/v1"},
		{"render", dir, "--fit", "--window", "1200", "--summarizer", "openai", "--summary-model", "m", "--base-url", "http://u:" + sessiontest.TestKey + "@127.0.0.1:1/v1"},
	} {
		res := cliRun(t, env, false, args...)
		if res.Code != 2 || !strings.Contains(res.Stderr, "must not hold credentials") {
			t.Fatalf("%s: exit %d: %s", args[0], res.Code, res.Stderr)
		}
		sessiontest.AssertNoKey(t, dir, res.Stdout, res.Stderr)
	}
	if after := sessionBytes(t, dir); !bytes.Equal(after["nodes.jsonl"], before["nodes.jsonl"]) || !bytes.Equal(after["events.jsonl"], before["events.jsonl"]) {
		t.Fatal("a refused run changed the session")
	}
}

func TestRenderMarginHelpAndValues(t *testing.T) {
	help := cliRun(t, nil, false, "render", "--help")
	if strings.Contains(help.Stdout, "(default -1)") || !strings.Contains(help.Stdout, "--margin tokens") || !strings.Contains(help.Stdout, "(default auto)") {
		t.Fatalf("margin help:\n%s", help.Stdout)
	}
	if strings.Contains(help.Stdout, "guaranteed to fit") {
		t.Error("render --help promises a guaranteed fit without naming the proxy tokenizers")
	}
	dir := sessiontest.CopyFixture(t, "tools")
	for _, tc := range []struct {
		margin string
		code   int
	}{{"auto", 0}, {"300", 0}, {"0", 0}, {"-5", 2}, {"lots", 2}} {
		if r := cliRun(t, nil, false, "render", dir, "--fit", "--window", "2000", "--margin", tc.margin, "--format", "ids"); r.Code != tc.code {
			t.Errorf("--margin %s: exit %d, want %d: %s", tc.margin, r.Code, tc.code, r.Stderr)
		}
	}
}

// TestRenderFitReportSaysProxy: a fit by a proxy tokenizer's count says so.
func TestRenderFitReportSaysProxy(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	for model, proxy := range map[string]bool{"gpt-4.1": false, "claude-sonnet-4": true} {
		res := cliRun(t, nil, false, "render", dir, "--fit", "--model", model, "--window", "1200", "--format", "ids", "--json")
		m := decodeJSON(t, strings.TrimSpace(res.Stdout))
		if res.Code != 0 || m["encoding_is_proxy"] != proxy {
			t.Errorf("%s: exit %d, encoding_is_proxy %v, want %v", model, res.Code, m["encoding_is_proxy"], proxy)
		}
	}
}
