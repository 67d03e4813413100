package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	dir := copyFixture(t, "compacted")
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
	dir := copyFixture(t, "tools")
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
	dir := copyFixture(t, "tools")
	for _, tc := range []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"protected content over budget", []string{"render", dir, "--fit", "--window", "600", "--format", "openai", "--no-calibrate"}, 5, "does not fit"},
		{"calibrated prefix over budget", []string{"render", dir, "--fit", "--window", "600", "--format", "openai"}, 5, "does not fit"},
		{"explicit output cap above the model's capability", []string{"render", dir, "--fit", "--model", "gpt-4o", "--output-cap", "100000"}, 2, "cannot be honoured"},
		{"fit flag without --fit", []string{"render", dir, "--window", "1000"}, 2, "--window needs --fit"},
		{"jsonl is not a request format", []string{"render", dir, "--fit", "--format", "jsonl"}, 2, "--fit prints"},
		{"unknown model", []string{"render", dir, "--fit", "--model", "gpt-4q"}, 2, "gpt-4q"},
		{"unknown summarizer", []string{"render", dir, "--fit", "--summarizer", "bogus"}, 2, "--summarizer must be extractive, openai or exec"},
		{"exec without a command", []string{"render", dir, "--fit", "--summarizer", "exec"}, 2, "needs --summarizer-cmd"},
		{"a command without exec", []string{"render", dir, "--fit", "--summarizer-cmd", "cat"}, 2, "needs --summarizer exec"},
		{"negative margin", []string{"render", dir, "--fit", "--margin", "-5"}, 2, "--margin must not be negative"},
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
	dir := copyFixture(t, "tools")
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
