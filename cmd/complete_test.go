package cmd

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/report"
)

// complete asks cobra's hidden __complete command, as the shell scripts
// do, and returns the candidates and the directive line.
func complete(t *testing.T, args ...string) (candidates []string, directive string) {
	t.Helper()
	r := cliRun(t, nil, false, append([]string{"__complete"}, args...)...)
	if r.Code != 0 {
		t.Fatalf("__complete %v: exit %d %s", args, r.Code, r.Stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
	return lines[:len(lines)-1], lines[len(lines)-1]
}

func TestDynamicCompletion(t *testing.T) {
	const dir = "../fixtures/compacted"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		// checkout's ID: every node but summaries (HEAD never rests on one).
		{"checkout id", []string{"checkout", dir, "a"}, "a1\tassistant a2\tassistant a3\tassistant a4\tassistant a5\tassistant a6\tassistant a7\tassistant a8\tassistant a4x\tassistant"},
		{"render --head", []string{"render", dir, "--head", "u"}, "u1\tuser u2\tuser u3\tuser u4\tuser u2x\tuser"},
		{"search --head", []string{"search", dir, "x", "--head", "t"}, "t1\ttool t2\ttool t3\ttool t4\ttool"},
		{"render --format", []string{"render", dir, "--format", ""}, "text ids jsonl openai anthropic responses gemini"},
		{"--color", []string{"config", "--color", ""}, "auto always never"},
		{"completion shells", []string{"completion", ""}, "bash zsh fish powershell"},
		{"no session", []string{"checkout", "/nonexistent", ""}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, directive := complete(t, tc.args...)
			if strings.Join(got, " ") != tc.want {
				t.Fatalf("candidates %q, want %q", strings.Join(got, " "), tc.want)
			}
			if tc.name != "completion shells" && directive != ":4" {
				t.Fatalf("directive %s, want :4 (no file completion)", directive)
			}
		})
	}
	// Flags other commands define get completions by name: every command
	// with an --encoding flag completes the encodings.
	ios, _, _, _ := report.Test()
	var found bool
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c.LocalNonPersistentFlags().Lookup("encoding") == nil {
			return
		}
		found = true
		path := strings.Fields(c.CommandPath())[1:]
		got, _ := complete(t, append(path, "--encoding", "")...)
		if strings.Join(got, " ") != "o200k_base cl100k_base" {
			t.Errorf("%s --encoding: %q", c.CommandPath(), got)
		}
	}
	walk(NewRootCmd(&Factory{IO: ios}))
	if !found {
		t.Log("no command defines --encoding yet")
	}
}

func TestCompletionScripts(t *testing.T) {
	for shell, marker := range map[string]string{
		"bash":       "__start_ctxfold",
		"zsh":        "#compdef ctxfold",
		"fish":       "complete -c ctxfold",
		"powershell": "Register-ArgumentCompleter",
	} {
		r := cliRun(t, nil, false, "completion", shell)
		if r.Code != 0 || !strings.Contains(r.Stdout, marker) {
			t.Errorf("%s: exit %d, stdout lacks %q", shell, r.Code, marker)
		}
	}
	if r := cliRun(t, nil, false, "completion", "tcsh"); r.Code != ExitUsage || !strings.Contains(r.Stderr, `unknown shell "tcsh"`) {
		t.Errorf("tcsh: exit %d %q", r.Code, r.Stderr)
	}
}

// Model names come from the built-in table plus the config file's models:.
func TestModelCompletion(t *testing.T) {
	xdg := writeConfig(t, "models:\n  my-finetune:\n    window: 32768\n")
	for _, args := range [][]string{{"config", "--model", ""}, {"compact", "x", "--model", ""}, {"init", "x", "--model", ""}} {
		r := cliRun(t, map[string]string{"XDG_CONFIG_HOME": xdg}, false, append([]string{"__complete"}, args...)...)
		lines := strings.Split(r.Stdout, "\n")
		if !slices.Contains(lines, "my-finetune") || !slices.Contains(lines, "gpt-4o") || !slices.Contains(lines, "claude-sonnet-4-5") {
			t.Errorf("%v: %q", args, r.Stdout)
		}
	}
}
