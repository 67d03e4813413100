package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/archive"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
)

// archiveSearchOptions are search --archive's: the full-text index of
// every archived session (docs/ARCHIVE.md) instead of one session's nodes.
type archiveSearchOptions struct {
	IO     *report.IOStreams
	JSON   bool
	Dir    string
	Search archive.SearchOptions
}

// archiveSearchResult is search --archive's --json object.
type archiveSearchResult struct {
	Dir   string        `json:"dir"`
	Query string        `json:"query"`
	Hits  []archive.Hit `json:"hits"`
	Total int           `json:"total"`
}

// addArchiveSearch gives search its --archive mode: the flags, one
// argument (QUERY) instead of DIR QUERY, and its own run. It wraps the
// command so search.go itself only calls this.
func addArchiveSearch(f *Factory, cmd *cobra.Command) {
	opts := &archiveSearchOptions{IO: f.IO}
	var on bool
	var since, dir string
	fl := cmd.Flags()
	fl.BoolVar(&on, "archive", false, "search every archived session (ctxfold archive) for QUERY: search --archive QUERY")
	fl.StringVar(&opts.Search.Client, "client", "", "with --archive: only this client's sessions")
	fl.StringVar(&since, "since", "", "with --archive: only nodes created on or after DATE (YYYY-MM-DD or RFC 3339)")
	fl.IntVar(&opts.Search.Limit, "limit", 20, "with --archive: at most N hits, best first")
	fl.StringVar(&dir, "archive-dir", "", "with --archive: the archive directory (default $XDG_DATA_HOME/ctxfold/archive)")
	_ = cmd.RegisterFlagCompletionFunc("client", fixedCompletion(importer.Finders()...))
	cmd.Use = "search {DIR QUERY | --archive QUERY}"
	cmd.Long = strings.Replace(cmd.Long, "\n\nEXIT STATUS", `

With --archive, QUERY is looked up in the full-text index of every session
'ctxfold archive' keeps, across sessions and clients, even those the client
deleted since. QUERY is an FTS5 query: words (all must occur, in any order,
case-insensitive), "a phrase", prefix*, a OR b, a NOT b. Each hit names the
client, the original file, the archived session directory and the node
('ctxfold render SESSION --head NODE' opens it there), its role, its status
in that session's view, its time and a snippet. Piped, one tab-separated
line a hit: client, node id, role, status, time, session, file, snippet.

EXIT STATUS`, 1)
	args, runE := cmd.Args, cmd.RunE
	cmd.Args = func(c *cobra.Command, a []string) error {
		if on {
			return exactArgs(1)(c, a)
		}
		return args(c, a)
	}
	cmd.RunE = func(c *cobra.Command, a []string) error {
		if !on {
			for _, name := range []string{"client", "since", "limit", "archive-dir"} {
				if c.Flags().Changed(name) {
					return &UsageError{Err: fmt.Errorf("--%s needs --archive", name)}
				}
			}
			return runE(c, a)
		}
		if err := f.resolveArchiveSearch(opts, a[0], since, dir); err != nil {
			return err
		}
		return runArchiveSearch(c.Context(), opts)
	}
}

// resolveArchiveSearch checks --archive's flags and fills its options.
func (f *Factory) resolveArchiveSearch(opts *archiveSearchOptions, query, since, dir string) error {
	if strings.TrimSpace(query) == "" {
		return &UsageError{Err: errors.New("search: QUERY is empty")}
	}
	if opts.Search.Limit < 1 {
		return &UsageError{Err: fmt.Errorf("--limit must be at least 1, got %d", opts.Search.Limit)}
	}
	if since != "" {
		t, err := time.Parse("2006-01-02", since)
		if err != nil {
			if t, err = time.Parse(time.RFC3339, since); err != nil {
				return &UsageError{Err: fmt.Errorf("--since must be a date (YYYY-MM-DD) or an RFC 3339 time, got %q", since)}
			}
		}
		opts.Search.Since = t
	}
	d, err := f.archiveDir(dir)
	if err != nil {
		return err
	}
	opts.Dir, opts.Search.Query, opts.JSON = d, query, f.IO.JSON
	return nil
}

func runArchiveSearch(ctx context.Context, opts *archiveSearchOptions) error {
	hits, err := archive.Search(ctx, opts.Dir, opts.Search)
	var qe *archive.QueryError
	var ni *archive.NoIndexError
	if errors.As(err, &qe) || errors.As(err, &ni) {
		return &UsageError{Err: err}
	}
	if err != nil {
		return err
	}
	if opts.JSON {
		if hits == nil {
			hits = []archive.Hit{}
		}
		return report.JSON(opts.IO.Out, archiveSearchResult{Dir: opts.Dir, Query: opts.Search.Query, Hits: hits, Total: len(hits)})
	}
	p := report.NewPalette(opts.IO)
	for _, h := range hits {
		safe := func(s string) string { return render.TextSafe(s) }
		if !opts.IO.StdoutTTY {
			fmt.Fprintf(opts.IO.Out, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", h.Client, safe(h.NodeID), h.Role, h.Status,
				safe(h.Time), safe(h.Session), safe(h.File), h.Snippet)
			continue
		}
		fmt.Fprintf(opts.IO.Out, "%s · %s · %s · %s · %s\n    %s\n    %s\n", p.Bold(h.Client), safe(h.Time), h.Role, h.Status,
			safe(h.File), h.Snippet, p.Dim("ctxfold render "+safe(h.Session)+" --head "+safe(h.NodeID)))
	}
	if len(hits) == 0 && opts.IO.StderrTTY {
		fmt.Fprintln(opts.IO.ErrOut, "no matches")
	}
	return nil
}
