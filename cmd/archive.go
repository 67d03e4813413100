package cmd

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/archive"
	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/report"
)

type archiveOptions struct {
	IO      *report.IOStreams
	JSON    bool
	Clients []string
	Dir     string
	Reindex bool
	Run     archive.Options
}

// archiveLine is archive's --json line: one per run.
type archiveLine struct {
	Dir string `json:"dir"`
	archive.Counts
	Errors []string `json:"errors"`
}

func newArchiveCmd(f *Factory, runF func(*archiveOptions) error) *cobra.Command {
	opts := &archiveOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "archive",
		Short: "Keep every session of every agent on this machine, searchable",
		Long: `Keep a copy of every session the agents ctxfold reads keep on this machine
(the ones 'ctxfold sessions' lists), each as a session directory under the
archive: $XDG_DATA_HOME/ctxfold/archive, else ~/.local/share/ctxfold/archive,
or --dir. Nothing the archive held is ever dropped: a session the client
deletes stays archived, and a transcript the client rewrote is kept as a new
version beside the old one.

Each run is incremental: an unchanged transcript costs a stat and a hash of
its bytes, a grown one its new bytes, and the full-text index beside the
archive gets only the new nodes ('ctxfold search --archive QUERY' reads it).
A damaged index is found and rebuilt; --reindex rebuilds it from the archive
alone. Runs are locked: one started while another runs waits for it, so it
is safe from cron or a hook at any time. A killed run loses nothing; the
next completes it.

Progress goes to stderr on a terminal; --json prints one line per run with
the counts: files, new, grown, unchanged, rewritten, failed, bytes (parsed),
indexed_nodes, seconds. A session that cannot be archived (or indexed) is reported and
the others are still archived; the exit status is then 2.` + exitStatusHelp(""),
		Example: `  ctxfold archive
  ctxfold archive --client claude-code --json
  # every hour, from cron:
  0 * * * * ctxfold archive --json >> ~/.local/share/ctxfold/archive.log 2>&1`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.resolveArchive(opts); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			// A run imports as 'ctxfold import' does, and indexes: at the
			// command line's 25% the collector ran four times as often
			// as import's, for no smaller peak (docs/BENCHMARKS.md,
			// "archive").
			defer liveGC(f.Getenv)()
			return runArchive(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&opts.Clients, "client", nil, "archive only these clients' sessions: "+strings.Join(importer.Finders(), ", "))
	fl.StringVar(&opts.Dir, "dir", "", "the archive directory (default $XDG_DATA_HOME/ctxfold/archive)")
	fl.BoolVar(&opts.Reindex, "reindex", false, "rebuild the full-text index from the archive alone")
	_ = cmd.RegisterFlagCompletionFunc("client", fixedCompletion(importer.Finders()...))
	_ = cmd.MarkFlagDirname("dir")
	return cmd
}

// resolveArchive checks the flags and fills the run's options.
func (f *Factory) resolveArchive(opts *archiveOptions) error {
	for _, c := range opts.Clients {
		if !slices.Contains(importer.Finders(), c) {
			return &UsageError{Err: fmt.Errorf("--client must be one of %s, got %q", strings.Join(importer.Finders(), ", "), c)}
		}
	}
	dir, err := f.archiveDir(opts.Dir)
	if err != nil {
		return err
	}
	lo, err := f.liveOptions()
	if err != nil {
		return err
	}
	// A refresh overlapping with the estimate's preparation is of no use here.
	lo.Prepare = nil
	opts.Run = archive.Options{Dir: dir, Env: f.clientEnv(),
		Clients: opts.Clients, Live: lo, Reindex: opts.Reindex}
	opts.JSON = f.IO.JSON
	return nil
}

// archiveDir is --dir made absolute, else the default archive directory.
func (f *Factory) archiveDir(flag string) (string, error) {
	if flag != "" {
		abs, err := filepath.Abs(flag)
		if err != nil {
			return "", &UsageError{Err: fmt.Errorf("--dir: %w", err)}
		}
		return abs, nil
	}
	dir, err := archive.DefaultDir(f.Getenv)
	if err != nil {
		return "", &UsageError{Err: err}
	}
	return dir, nil
}

func runArchive(ctx context.Context, opts *archiveOptions) error {
	progress := report.NewProgress(opts.IO, "archiving", 0)
	ro := opts.Run
	ro.Progress = func(done, total int, _ input.Found, _ string) {
		progress.SetTotal(total)
		progress.Add(1)
	}
	c, errs, err := archive.Run(ctx, ro)
	progress.Done()
	if err != nil {
		return err
	}
	line := archiveLine{Dir: ro.Dir, Counts: c, Errors: []string{}}
	for _, e := range errs {
		line.Errors = append(line.Errors, oneLine(e))
		if !opts.JSON {
			warnf(opts.IO.ErrOut, "%s", e)
		}
	}
	if opts.JSON {
		if err := report.JSON(opts.IO.Out, line); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(opts.IO.Out, "%d sessions: %d new, %d grown, %d unchanged, %d rewritten, %d failed; %s parsed, %d nodes indexed in %.1fs\n",
			c.Files, c.New, c.Grown, c.Unchanged, c.Rewritten, c.Failed, byteSize(c.Bytes), c.Indexed, c.Seconds)
	}
	if c.Failed > 0 || len(errs) > 0 {
		return &SilentError{Code: ExitUsage}
	}
	return nil
}
