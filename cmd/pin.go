package cmd

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/store"
)

type pinOptions struct {
	IO    *report.IOStreams
	Dir   string
	IDs   []string
	Unpin bool
	JSON  bool
	Now   func() time.Time
	Store store.WriteOptions
	Open  store.OpenOptions
}

func newPinCmd(f *Factory, runF func(*pinOptions) error) *cobra.Command {
	return newPinCmdFor(f, false, runF)
}

func newUnpinCmd(f *Factory, runF func(*pinOptions) error) *cobra.Command {
	return newPinCmdFor(f, true, runF)
}

func newPinCmdFor(f *Factory, unpin bool, runF func(*pinOptions) error) *cobra.Command {
	opts := &pinOptions{IO: f.IO, Unpin: unpin}
	use, short, long, example := "pin DIR [ID...]", "Keep nodes verbatim through every compaction",
		`Pin nodes: every later compaction keeps a pinned node's text verbatim, in the
summary's "Pinned" section or in the kept tail, and 'ctxfold audit' reports
the facts of pinned nodes on their own. Pins are recorded append-only as
node_pinned events in events.jsonl (docs/FORMAT.md §9): the DAG is not
touched. A summary node cannot be pinned (pin the turns it covers). Without
ID, list the pinned nodes.`, `  ctxfold pin ./s u1              # the user's rules
  ctxfold pin ./s                 # list the pins
  ctxfold graph ./s               # pinned nodes say "pinned"`
	if unpin {
		use, short, long, example = "unpin DIR ID...", "Release pinned nodes",
			`Unpin nodes: record a node_unpinned event (docs/FORMAT.md §9). The next
compaction no longer quotes their text; summaries already written are not
rewritten.`, `  ctxfold unpin ./s u1`
	}
	cmd := &cobra.Command{
		Use:     use,
		Short:   short,
		Long:    long + exitStatusHelp("  "+map[bool]string{false: "pin", true: "unpin"}[unpin]+": 2 an id names no node or a summary (nothing written)"),
		Example: example,
		Args:    minArgs(map[bool]int{false: 1, true: 2}[unpin]),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return nil, cobra.ShellCompDirectiveFilterDirs
			}
			return completeNodeIDs(f, args[0], toComplete)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir, opts.IDs = args[0], args[1:]
			opts.JSON = f.IO.JSON
			opts.Now = f.Now
			opts.Store = f.writeOptions(map[bool]string{false: "pin", true: "unpin"}[unpin])
			opts.Open = f.openOptions()
			if runF != nil {
				return runF(opts)
			}
			return runPin(cmd.Context(), opts)
		},
	}
	return cmd
}

// pinJSON is the --json object.
type pinJSON struct {
	Session string   `json:"session"`
	Action  string   `json:"action"`
	IDs     []string `json:"ids"`
	Pinned  []string `json:"pinned"`
}

func runPin(ctx context.Context, opts *pinOptions) error {
	action := "pinned"
	if opts.Unpin {
		action = "unpinned"
	}
	if len(opts.IDs) > 0 {
		now := opts.Now
		if now == nil {
			now = time.Now
		}
		warnings, err := store.Update(ctx, opts.Dir, opts.Store, func(tx *store.Tx) error {
			return tx.Pin(opts.IDs, !opts.Unpin, now().UTC().Format(time.RFC3339Nano))
		})
		printWarnings(opts.IO.ErrOut, warnings)
		if err != nil {
			return err
		}
	} else {
		action = "list"
	}
	s, err := store.Open(opts.Dir, opts.Open)
	if err != nil {
		return err
	}
	defer s.Close()
	pins, err := s.Pins()
	if err != nil {
		return err
	}
	list := make([]string, 0, len(pins))
	for id := range pins {
		list = append(list, id)
	}
	sort.Strings(list)
	if opts.JSON {
		ids := opts.IDs
		if ids == nil {
			ids = []string{}
		}
		return report.JSON(opts.IO.Out, pinJSON{Session: opts.Dir, Action: action, IDs: ids, Pinned: list})
	}
	if action != "list" {
		for _, id := range opts.IDs {
			fmt.Fprintf(opts.IO.Out, "%s\t%s\n", action, render.TextSafe(id))
		}
		return nil
	}
	for _, id := range list {
		fmt.Fprintln(opts.IO.Out, render.TextSafe(id))
	}
	return nil
}
