package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/store"
)

type checkoutOptions struct {
	IO    *report.IOStreams
	Dir   string
	ID    string
	JSON  bool
	Store store.WriteOptions
	Open  store.OpenOptions
}

func newCheckoutCmd(f *Factory, runF func(*checkoutOptions) error) *cobra.Command {
	opts := &checkoutOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "checkout DIR [ID]",
		Short: "Move HEAD to a node, or print HEAD",
		Long: `Move HEAD to node ID: the one explicit HEAD mover (docs/FORMAT.md §1). HEAD never rests
on a summary node or a missing id; either is refused and nothing changes.
Without ID, print the current HEAD.` + exitStatusHelp(""),
		Example: `  ctxfold checkout ./s            # print HEAD
  ctxfold checkout ./s n7         # rewind to n7; the next append forks there`,
		Args: rangeArgs(1, 2),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) == 1 {
				return completeNodeIDs(f, args[0], toComplete)
			}
			return nil, cobra.ShellCompDirectiveDefault
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			if len(args) == 2 {
				opts.ID = args[1]
			}
			opts.JSON = f.IO.JSON
			opts.Store = f.writeOptions("checkout")
			opts.Open = f.openOptions()
			if runF != nil {
				return runF(opts)
			}
			return runCheckout(cmd.Context(), opts)
		},
	}
	return cmd
}

func runCheckout(ctx context.Context, opts *checkoutOptions) error {
	if opts.ID == "" {
		s, err := store.Open(opts.Dir, opts.Open)
		if err != nil {
			return err
		}
		defer s.Close()
		printWarnings(opts.IO.ErrOut, s.Warnings)
		if opts.JSON {
			return report.JSON(opts.IO.Out, checkoutResult{Session: opts.Dir, Head: s.Meta.Head})
		}
		if s.Meta.Head != "" {
			fmt.Fprintln(opts.IO.Out, render.TextSafe(s.Meta.Head))
		}
		return nil
	}
	var previous string
	warnings, err := store.Update(ctx, opts.Dir, opts.Store, func(tx *store.Tx) error {
		previous = tx.Session().Meta.Head
		return tx.SetHead(opts.ID)
	})
	printWarnings(opts.IO.ErrOut, warnings)
	if err != nil {
		return err
	}
	if opts.JSON {
		return report.JSON(opts.IO.Out, checkoutResult{Session: opts.Dir, Head: opts.ID, Previous: &previous})
	}
	fmt.Fprintln(opts.IO.Out, render.TextSafe(opts.ID))
	return nil
}

// checkoutResult is checkout's --json object; Previous is set only when
// HEAD was moved.
type checkoutResult struct {
	Session  string  `json:"session"`
	Head     string  `json:"head"`
	Previous *string `json:"previous,omitempty"`
}
