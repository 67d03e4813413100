package cmd

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/report"
)

type modelsOptions struct {
	IO     *report.IOStreams
	JSON   bool
	Models map[string]estimate.Model
}

// modelsReport is `ctxfold models --json`: the whole table in one object.
type modelsReport struct {
	Models []estimate.Model `json:"models"`
}

func newModelsCmd(f *Factory, runF func(*modelsOptions) error) *cobra.Command {
	opts := &modelsOptions{IO: f.IO}
	return &cobra.Command{
		Use:   "models",
		Short: "List the model table: window, max output, encoding, exact or proxy, source",
		Long: `List every model estimate, compact, graph and render --fit can budget for: the
built-in table merged with the config file's models: (which wins). Each row
gives the provider (which selects the chat-format overhead rules), the context
window, the output capability, the encoding that counts it, whether that
encoding is the model's own (exact) or a stated proxy (Claude, Gemini and open
models: their tokenizers are not public), and where the figures come from.

A name that is not listed still resolves when it is another spelling of a
listed model (a provider prefix such as anthropic/ or openai/, a date suffix,
a [1m] long-context variant) or by family (claude-opus-5-7 budgets as the
newest listed claude-opus not above it; my-gpt-5 as gpt-5), with one
warning naming the model used; an editor's prefix (aide-gpt-5, aide:gpt-4o)
is another spelling, without a warning. A window the session records (Codex's
model_context_window) beats the table; --window beats both.
docs/ESTIMATE.md documents the rules.` + exitStatusHelp(""),
		Example: `  ctxfold models
  ctxfold models --json | jq -r '.models[] | select(.proxy | not) | .name'`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.IO.JSON
			models, err := f.configModels()
			if err != nil {
				return err
			}
			opts.Models = models
			if runF != nil {
				return runF(opts)
			}
			return runModels(cmd.Context(), opts)
		},
	}
}

func runModels(_ context.Context, opts *modelsOptions) error {
	table := estimate.Table(opts.Models)
	if opts.JSON {
		return report.JSON(opts.IO.Out, modelsReport{Models: table})
	}
	exactness := func(m estimate.Model) string {
		if m.Proxy {
			return "proxy"
		}
		return "exact"
	}
	if !opts.IO.StdoutTTY {
		var b strings.Builder
		for _, m := range table {
			fmt.Fprintf(&b, "%s\t%s\t%d\t%d\t%s\t%s\t%s\n", m.Name, m.Provider, m.Window, m.MaxOutput, m.Encoding, exactness(m), m.Source)
		}
		_, err := fmt.Fprint(opts.IO.Out, b.String())
		return err
	}
	align := tw.CellAlignment{PerColumn: []tw.Align{tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignLeft, tw.AlignLeft, tw.AlignLeft}}
	t := tablewriter.NewTable(opts.IO.Out,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(align),
		tablewriter.WithRowAlignmentConfig(align),
	)
	t.Header("model", "provider", "window", "max output", "encoding", "count", "source")
	for _, m := range table {
		maxOut := "?"
		if m.MaxOutput > 0 {
			maxOut = report.Thousands(m.MaxOutput)
		}
		window := report.Thousands(m.Window)
		if m.LongWindow > 0 {
			window += " (" + strconv.Itoa(m.LongWindow/1000000) + "M with [1m])"
		}
		if err := t.Append([]string{m.Name, m.Provider, window, maxOut, m.Encoding, exactness(m), m.Source}); err != nil {
			return err
		}
	}
	return t.Render()
}
