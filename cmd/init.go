package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/store"
)

type initOptions struct {
	IO     *report.IOStreams
	Dir    string
	Model  string
	JSON   bool
	Store  store.WriteOptions
	Models map[string]estimate.Model
}

func newInitCmd(f *Factory, runF func(*initOptions) error) *cobra.Command {
	opts := &initOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "init DIR",
		Short: "Create an empty session directory",
		Long: `Create a session directory holding session.json, nodes.jsonl and events.jsonl
(docs/FORMAT.md). DIR is created if missing; an existing session is refused.` + exitStatusHelp(""),
		Example: `  ctxfold init ./my-session --model gpt-4o
  ctxfold init ./s --json`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			opts.JSON = f.IO.JSON
			opts.Store = f.writeOptions("init")
			opts.Models, _ = f.configModels()
			if runF != nil {
				return runF(opts)
			}
			return runInit(cmd.Context(), opts)
		},
	}
	// --model is a setting (flag > CTXFOLD_MODEL > config file): loadConfig
	// writes the resolved value into the flag.
	cmd.Flags().StringVar(&opts.Model, "model", "", "model recorded in the session (used by estimate and compact)")
	return cmd
}

func runInit(_ context.Context, opts *initOptions) error {
	meta, err := store.Init(opts.Dir, opts.Model, opts.Store)
	if err != nil {
		return err
	}
	if msg := modelNotice(opts.Model, opts.Models); msg != "" {
		warnf(opts.IO.ErrOut, "%s", msg)
	}
	if opts.JSON {
		return report.JSON(opts.IO.Out, initResult{Session: opts.Dir, FormatVersion: meta.FormatVersion, Model: meta.Model})
	}
	fmt.Fprintf(opts.IO.Out, "initialized empty session in %s\n", opts.Dir)
	return nil
}

// initResult is init's --json object.
type initResult struct {
	Session       string `json:"session"`
	FormatVersion int    `json:"format_version"`
	Model         string `json:"model"`
}
