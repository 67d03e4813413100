package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/store"
)

type repairOptions struct {
	IO     *report.IOStreams
	Dir    string
	Unlock bool
	JSON   bool
	Store  store.WriteOptions
}

func newRepairCmd(f *Factory, runF func(*repairOptions) error) *cobra.Command {
	opts := &repairOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "repair DIR",
		Short: "Recover a session after a crash",
		Long: `Recover a session after an interrupted write: bytes after the last committed
write (or a torn last line) are moved to DIR/lost+found/ and nodes.jsonl is
truncated to its last complete line. A nodes.jsonl shorter than session.json
records (data removed outside ctxfold) is truncated to its last complete line,
the partial line kept in lost+found/ and the committed length recomputed; a
HEAD that was on a removed line moves to the last complete node. Nothing is
deleted. A malformed line in the middle of the file is reported, not repaired. The lock itself dies with
the process holding it; --unlock clears a holder record a dead process left
in DIR/lock (it takes and releases the lock, so it waits for a live writer).` + exitStatusHelp(""),
		Example: `  ctxfold repair ./s
  ctxfold repair --unlock ./s`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			opts.JSON = f.IO.JSON
			opts.Store = f.writeOptions("repair")
			if runF != nil {
				return runF(opts)
			}
			return runRepair(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Unlock, "unlock", false, "clear a lock holder record left by a dead process")
	return cmd
}

func runRepair(ctx context.Context, opts *repairOptions) error {
	actions, err := store.Repair(ctx, opts.Dir, store.RepairOptions{WriteOptions: opts.Store, Unlock: opts.Unlock})
	if err != nil {
		return err
	}
	msgs := make([]string, len(actions))
	for i, a := range actions {
		msgs[i] = a.String()
	}
	if opts.JSON {
		return report.JSON(opts.IO.Out, repairResult{Session: opts.Dir, Repaired: len(actions) > 0, Actions: msgs})
	}
	if len(actions) == 0 {
		fmt.Fprintf(opts.IO.Out, "%s: nothing to repair\n", opts.Dir)
		return nil
	}
	for _, m := range msgs {
		fmt.Fprintln(opts.IO.Out, m)
	}
	return nil
}

// repairResult is repair's --json object.
type repairResult struct {
	Session  string   `json:"session"`
	Repaired bool     `json:"repaired"`
	Actions  []string `json:"actions"`
}
