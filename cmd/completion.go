package cmd

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/report"
)

// The completion command (ours, not cobra's default, so its help has
// examples and an EXIT STATUS section like every other) and the flag
// completions that ask ctxfold itself (model names, encodings).

var completionShells = []string{"bash", "zsh", "fish", "powershell"}

type completionOptions struct {
	IO    *report.IOStreams
	Shell string
	Root  *cobra.Command
}

func newCompletionCmd(f *Factory, runF func(*completionOptions) error) *cobra.Command {
	opts := &completionOptions{IO: f.IO}
	return &cobra.Command{
		Use:   "completion SHELL",
		Short: "Print the shell completion script for bash, zsh, fish or powershell",
		Long: `Print a completion script for SHELL (bash, zsh, fish or powershell). Besides
commands and flags it completes node ids (checkout's ID, --head), model
names, encodings and formats by asking ctxfold itself. The same scripts are
committed under completions/.` + exitStatusHelp(""),
		Example: `  # bash (needs the bash-completion package)
  ctxfold completion bash > ~/.local/share/bash-completion/completions/ctxfold
  # zsh: a directory on $fpath
  ctxfold completion zsh > "${fpath[1]}/_ctxfold"
  # fish
  ctxfold completion fish > ~/.config/fish/completions/ctxfold.fish
  # PowerShell
  ctxfold completion powershell | Out-String | Invoke-Expression`,
		ValidArgs: completionShells,
		Args:      exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Shell, opts.Root = args[0], cmd.Root()
			if runF != nil {
				return runF(opts)
			}
			return writeCompletion(opts.Root, opts.Shell, opts.IO.Out)
		},
	}
}

func writeCompletion(root *cobra.Command, shell string, w io.Writer) error {
	switch shell {
	case "bash":
		return root.GenBashCompletionV2(w, true)
	case "zsh":
		return root.GenZshCompletion(w)
	case "fish":
		return root.GenFishCompletion(w, true)
	case "powershell":
		return root.GenPowerShellCompletionWithDesc(w)
	}
	return &UsageError{Err: fmt.Errorf("unknown shell %q (want %s)", shell, strings.Join(completionShells, ", "))}
}

// flagCompleters complete flags by name wherever a command defines them
// without its own completion function.
func flagCompleters(f *Factory) map[string]func() []string {
	return map[string]func() []string{
		"encoding": func() []string { return estimate.Encodings },
		"color":    func() []string { return []string{"auto", "always", "never"} },
		"model":    func() []string { return modelNames(f) },
	}
}

// modelNames are the built-in model table's names plus the config file's
// models: entries (the config is loaded before completion runs).
func modelNames(f *Factory) []string {
	names := estimate.KnownModels()
	if f.Config != nil {
		extra := f.Config.GetStringMap("models")
		for name := range extra {
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
		sort.Strings(names)
	}
	return names
}

func registerFlagCompletions(c *cobra.Command, f *Factory) {
	completers := flagCompleters(f)
	c.LocalNonPersistentFlags().VisitAll(func(fl *pflag.Flag) {
		values, ok := completers[fl.Name]
		if !ok {
			return
		}
		if _, exists := c.GetFlagCompletionFunc(fl.Name); exists {
			return
		}
		_ = c.RegisterFlagCompletionFunc(fl.Name, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return values(), cobra.ShellCompDirectiveNoFileComp
		})
	})
	for _, sub := range c.Commands() {
		registerFlagCompletions(sub, f)
	}
}
