package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
)

// withoutModel copies the tools fixture and removes the model its
// session.json records.
func withoutModel(t *testing.T) string {
	t.Helper()
	dir := sessiontest.CopyFixture(t, "tools")
	p := filepath.Join(dir, "session.json")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	stripped := regexp.MustCompile(`\n\s*"model": "[^"]*",`).ReplaceAll(data, nil)
	if string(stripped) == string(data) {
		t.Fatal("the fixture records no model")
	}
	if err := os.WriteFile(p, stripped, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// compact measures exactly what `ctxfold estimate` measures, under every
// model setting, from flags or the environment: tokens_before is estimate's
// total and the --if-above percentage is estimate's budget_pct.
func TestCompactMeasuresAsEstimate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		env   map[string]string
		flags []string
	}{
		{"defaults", nil, nil},
		{"encoding from the environment", map[string]string{"CTXFOLD_ENCODING": "cl100k_base"}, nil},
		{"encoding flag", nil, []string{"--encoding", "cl100k_base"}},
		{"output cap and window", nil, []string{"--window", "4000", "--output-cap", "1500"}},
		{"output capability", nil, []string{"--max-output", "64"}},
		{"model from the environment loses to the session's", map[string]string{"CTXFOLD_MODEL": "gpt-4"}, nil},
		{"explicit model", map[string]string{"CTXFOLD_MODEL": "gpt-4"}, []string{"--model", "gpt-3.5-turbo"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := sessiontest.CopyFixture(t, "tools")
			env := func() map[string]string {
				m := map[string]string{}
				for k, v := range tc.env {
					m[k] = v
				}
				return m
			}
			est := cliRun(t, env(), false, append([]string{"estimate", dir, "--json", "--no-cache"}, tc.flags...)...)
			if est.Code != 0 {
				t.Fatalf("estimate: %d %s", est.Code, est.Stderr)
			}
			e := decodeJSON(t, est.Stdout)
			dry := cliRun(t, env(), false, append([]string{"compact", dir, "--dry-run", "--json", "--keep-tokens", "300"}, tc.flags...)...)
			if dry.Code != 0 {
				t.Fatalf("compact: %d %s", dry.Code, dry.Stderr)
			}
			if c := decodeJSON(t, dry.Stdout); c["tokens_before"] != e["total"] {
				t.Fatalf("compact tokens_before %v, estimate total %v", c["tokens_before"], e["total"])
			}
			below := cliRun(t, env(), false, append([]string{"compact", dir, "--json", "--if-above", "100"}, tc.flags...)...)
			if below.Code != 0 {
				t.Fatalf("compact --if-above: %d %s", below.Code, below.Stderr)
			}
			want := fmt.Sprintf("Context is at %.1f%% of the budget", e["budget_pct"].(float64))
			if c := decodeJSON(t, below.Stdout); !strings.HasPrefix(c["message"].(string), want) || c["reason"] != "below_threshold" {
				t.Fatalf("compact says %v, estimate's budget_pct is %v", c["message"], e["budget_pct"])
			}
		})
	}
}

func TestModelFlagsRejected(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		err  string
	}{
		{"compact: unknown encoding flag", nil, []string{"compact", dir, "--encoding", "p50k"}, `--encoding must be o200k_base or cl100k_base, got "p50k"`},
		{"compact: unknown encoding from the environment", map[string]string{"CTXFOLD_ENCODING": "p50k"}, []string{"compact", dir}, `--encoding must be`},
		{"render --fit: unknown encoding", nil, []string{"render", dir, "--fit", "--encoding", "p50k"}, `--encoding must be`},
		{"compact: negative output cap", nil, []string{"compact", dir, "--output-cap", "-1"}, `--output-cap must not be negative`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cliRun(t, tc.env, false, tc.args...)
			if r.Code != ExitUsage || !strings.Contains(r.Stderr, tc.err) || r.Stdout != "" {
				t.Fatalf("exit %d, stderr %q, want 2 and %q", r.Code, r.Stderr, tc.err)
			}
		})
	}
}

// With neither a model nor a window, compact refuses as estimate does
// (exit 2) unless --keep-tokens gives it a target and no --if-above needs
// a budget.
func TestCompactWithoutAModel(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		code int
	}{
		{"no model", nil, nil, ExitUsage},
		{"a dry run with no model", nil, []string{"--dry-run"}, ExitUsage},
		{"--if-above needs a budget", nil, []string{"--keep-tokens", "300", "--if-above", "1"}, ExitUsage},
		{"--keep-tokens is a target", nil, []string{"--keep-tokens", "300"}, ExitOK},
		{"a window is enough", nil, []string{"--window", "100000", "--if-above", "0.1"}, ExitOK},
		{"the configured model", map[string]string{"CTXFOLD_MODEL": "gpt-4o"}, []string{"--if-above", "0.1"}, ExitOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := withoutModel(t)
			r := cliRun(t, tc.env, false, append([]string{"compact", dir}, tc.args...)...)
			if r.Code != tc.code {
				t.Fatalf("exit %d, want %d: %s", r.Code, tc.code, r.Stderr)
			}
			if tc.code == ExitUsage {
				est := cliRun(t, nil, false, "estimate", dir)
				if est.Code != ExitUsage || r.Stderr != est.Stderr {
					t.Fatalf("compact says %q, estimate (exit %d) says %q", r.Stderr, est.Code, est.Stderr)
				}
			}
		})
	}
}

// render --fit resolves the model as estimate and compact do: --model,
// else the session's, else the environment or config.
func TestRenderFitModelResolution(t *testing.T) {
	for _, tc := range []struct {
		name      string
		noModel   bool
		env       map[string]string
		args      []string
		wantModel string
	}{
		{"the session's model beats the environment", false, map[string]string{"CTXFOLD_MODEL": "gpt-4"}, nil, "gpt-4o"},
		{"an explicit model beats the session's", false, map[string]string{"CTXFOLD_MODEL": "gpt-4"}, []string{"--model", "gpt-4.1"}, "gpt-4.1"},
		{"the environment when the session records none", true, map[string]string{"CTXFOLD_MODEL": "gpt-4"}, nil, "gpt-4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := sessiontest.CopyFixture(t, "tools")
			if tc.noModel {
				dir = withoutModel(t)
			}
			r := cliRun(t, tc.env, false, append([]string{"render", dir, "--fit", "--json", "--format", "ids"}, tc.args...)...)
			if r.Code != 0 {
				t.Fatalf("exit %d: %s", r.Code, r.Stderr)
			}
			rep := decodeJSON(t, r.Stdout)
			if rep["model"] != tc.wantModel || rep["session"] != dir {
				t.Fatalf("report model %v session %v, want %s %s", rep["model"], rep["session"], tc.wantModel, dir)
			}
			for _, k := range []string{"output_reserve", "input_budget", "encoding"} {
				if _, ok := rep[k]; !ok {
					t.Fatalf("report lacks %s: %v", k, rep)
				}
			}
		})
	}
}
