package cmd

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
)

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// exactArgs is cobra.ExactArgs returning a UsageError (exit 2).
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return &UsageError{Err: fmt.Errorf("%s takes %d argument(s), got %d", cmd.CommandPath(), n, len(args))}
		}
		return nil
	}
}

func rangeArgs(lo, hi int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < lo || len(args) > hi {
			return &UsageError{Err: fmt.Errorf("%s takes %d to %d arguments, got %d", cmd.CommandPath(), lo, hi, len(args))}
		}
		return nil
	}
}

func minArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return &UsageError{Err: fmt.Errorf("%s needs at least %d argument(s)", cmd.CommandPath(), n)}
		}
		return nil
	}
}

// writeOptions are the store settings shared by every writing command.
func (f *Factory) writeOptions(command string) store.WriteOptions {
	return store.WriteOptions{
		LockTimeout:  f.global.LockTimeout,
		MaxLineBytes: f.global.MaxLineBytes,
		Command:      command,
		Now:          f.Now,
	}
}

func (f *Factory) openOptions() store.OpenOptions {
	// Run's context: Ctrl-C stops indexing a large session at once.
	return store.OpenOptions{MaxLineBytes: f.global.MaxLineBytes, Context: f.ctx}
}

// warnf is the one warning printer of the commands: "ctxfold: warning: "
// and the message on one line of w (stderr), neutralised like every text
// output (render.TextSafe), since messages quote transcript content.
func warnf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "ctxfold: warning: %s\n", render.TextSafe(fmt.Sprintf(format, args...)))
}

// printWarnings writes store warnings, one line each.
func printWarnings(w io.Writer, warnings []store.Warning) {
	for _, wn := range warnings {
		warnf(w, "%s", wn.String())
	}
}

// printWarningLines writes warning messages, one line each.
func printWarningLines(w io.Writer, warnings []string) {
	for _, m := range warnings {
		warnf(w, "%s", m)
	}
}
