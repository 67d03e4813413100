package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/report"
)

type configOptions struct {
	IO *report.IOStreams
	// File is the config file read ("" when none); Searched the path
	// looked at.
	File, Searched string
	Settings       map[string]Setting
	Warnings       []string
	JSON           bool
}

func newConfigCmd(f *Factory, runF func(*configOptions) error) *cobra.Command {
	opts := &configOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the effective settings and where each came from",
		Long: `Show every setting the config file and the environment may set, its
effective value, and where that value came from. Precedence, highest first:

  flag     given on the command line (--model gpt-4o)
  env      an environment variable: CTXFOLD_ plus the flag name in upper
           case with dashes as underscores (CTXFOLD_MAX_OUTPUT)
  file     the config file: --config, else $CTXFOLD_CONFIG, else
           $XDG_CONFIG_HOME/ctxfold/config.yaml (~/.config/ctxfold/config.yaml)
  default  the flag's default

The settings (keys are flag names; models is file-only):

` + configKeyList() + `

The model-related flags of estimate and compact are accepted here too, so
'ctxfold config --model X' shows what those commands would use. Keys in the
config file that are not settings are reported as warnings on stderr.
The file format is described in docs/CONFIG.md.` + exitStatusHelp(""),
		Example: `  ctxfold config
  CTXFOLD_MODEL=gpt-4o ctxfold config --json | jq .settings.model
  ctxfold config --config ./ci.yaml`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = f.ConfigFile
			opts.Searched, _ = f.configPath()
			opts.Settings = f.Settings
			opts.Warnings = f.ConfigWarnings
			opts.JSON = f.IO.JSON
			if runF != nil {
				return runF(opts)
			}
			return runConfig(cmd.Context(), opts)
		},
	}
	return cmd
}

func runConfig(_ context.Context, opts *configOptions) error {
	keys := make([]string, 0, len(opts.Settings))
	for k := range opts.Settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if opts.JSON {
		settings := map[string]configSetting{}
		for _, k := range keys {
			s := opts.Settings[k]
			settings[k] = configSetting{Value: s.Value, Source: s.Source, Env: s.Env}
		}
		warnings := opts.Warnings
		if warnings == nil {
			warnings = []string{}
		}
		return report.JSON(opts.IO.Out, configResult{File: opts.File, Searched: opts.Searched, Settings: settings, Warnings: warnings})
	}
	if opts.File != "" {
		fmt.Fprintf(opts.IO.Out, "# config file: %s\n", opts.File)
	} else {
		fmt.Fprintf(opts.IO.Out, "# config file: none (looked for %s)\n", opts.Searched)
	}
	// Piped: plain tab-separated columns (STYLE 7); on a TTY, aligned.
	w := opts.IO.Out
	var tw *tabwriter.Writer
	if opts.IO.StdoutTTY {
		tw = tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
		w = tw
	}
	p := report.NewPalette(opts.IO)
	for _, k := range keys {
		s := opts.Settings[k]
		source := s.Source
		if s.Source == SourceEnv {
			source += " " + s.Env
		}
		if s.Source != SourceDefault {
			source = p.Bold(source)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", k, displayValue(s.Value), source)
	}
	if tw != nil {
		return tw.Flush()
	}
	return nil
}

// configKeyList is the whitelist as an indented two-column list for help.
func configKeyList() string {
	var b strings.Builder
	for i, k := range configKeys {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "  %-15s %s", k.Name, k.Usage)
	}
	return b.String()
}

// displayValue prints a setting on one line: lists and maps as JSON, an
// unset string as "".
func displayValue(v any) string {
	switch x := v.(type) {
	case nil:
		return `""`
	case string:
		if x == "" {
			return `""`
		}
		return strings.ReplaceAll(x, "\n", " ")
	case map[string]any, []any, []string:
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		return string(b)
	}
	return fmt.Sprint(v)
}

// configResult is config's --json object.
type configResult struct {
	File     string                   `json:"config_file"`
	Searched string                   `json:"config_file_searched"`
	Settings map[string]configSetting `json:"settings"`
	Warnings []string                 `json:"warnings"`
}

// configSetting is one setting's value and where it came from.
type configSetting struct {
	Value  any    `json:"value"`
	Source string `json:"source"`
	Env    string `json:"env"`
}
