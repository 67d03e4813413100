package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/store"
)

type searchOptions struct {
	// File is the transcript file Dir is the cache session of
	// (docs/LIVE.md); "" for a session directory argument.
	File   string
	IO     *report.IOStreams
	Dir    string
	Query  string
	Regexp bool
	Head   string
	JSON   bool
	Open   store.OpenOptions
}

func newSearchCmd(f *Factory, runF func(*searchOptions) error) *cobra.Command {
	opts := &searchOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "search DIR QUERY",
		Short: "Find turns by text, including those folded into a summary",
		Long: `Search every node of the session for QUERY: a case-insensitive substring, or
with --regexp a regular expression (RE2 syntax; case-sensitive unless it
starts with (?i)). Content, thinking, tool calls and tool results are
searched; ids and metadata are not.

Recall is over the whole session, not just what the model reads: a turn
folded into a summary is still on disk (a cold layer). Each hit
says where it stands relative to the view rendered from HEAD (or --head):

  visible     the model reads it next turn
  covered     on HEAD's branch but replaced by the active summary (named)
  off-branch  on another branch (a retry or fork)
  relic       a superseded summary, never read again

and lists the branch tips whose spine holds it (* marks HEAD's branch).
On a terminal each hit takes two lines; piped, one tab-separated line:
id, role, status, covering summary, tips (comma-separated), snippet.
No match is not an error (exit 0).` + exitStatusHelp(""),
		Example: `  ctxfold search ./s "drop existing tables"
  ctxfold search ./s --regexp 'COPY [0-9]+'
  ctxfold search ./s sales --json | jq -r '.hits[] | select(.status=="covered") | .id'`,
		Args: exactArgs(2),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return nil, cobra.ShellCompDirectiveFilterDirs
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Query = args[1]
			// A transcript file is read through its cache session (docs/LIVE.md).
			var err error
			if opts.Dir, opts.File, err = f.sessionArg(cmd.Context(), args[0]); err != nil {
				return err
			}
			if opts.Query == "" {
				return &UsageError{Err: fmt.Errorf("search: QUERY is empty")}
			}
			opts.JSON = f.IO.JSON
			opts.Open = f.openOptions()
			if runF != nil {
				return runF(opts)
			}
			return runSearch(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&opts.Regexp, "regexp", "e", false, "QUERY is a regular expression (RE2)")
	fl.StringVar(&opts.Head, "head", "", "classify hits against the view from this node instead of HEAD")
	_ = cmd.RegisterFlagCompletionFunc("head", nodeIDFlagCompletion(f))
	addFileArgFlags(cmd, f)
	return cmd
}

// searchResult is search's --json object.
type searchResult struct {
	// File is the transcript file Session is the cache session of
	// (docs/LIVE.md); absent for a session directory argument.
	File    string          `json:"file,omitempty"`
	Session string          `json:"session"`
	Query   string          `json:"query"`
	Regexp  bool            `json:"regexp"`
	Head    string          `json:"head"`
	Hits    []searchHitJSON `json:"hits"`
	Counts  map[string]int  `json:"counts"`
	Total   int             `json:"total"`
}

// searchHitJSON is one hit in --json output.
type searchHitJSON struct {
	ID        string   `json:"id"`
	Role      string   `json:"role"`
	Line      int      `json:"line"`
	Summary   bool     `json:"summary"`
	Status    string   `json:"status"`
	CoveredBy string   `json:"covered_by"`
	Summaries []string `json:"summaries"`
	Tips      []string `json:"tips"`
	OnHead    bool     `json:"on_head"`
	Field     string   `json:"field"`
	Snippet   string   `json:"snippet"`
}

func runSearch(ctx context.Context, opts *searchOptions) error {
	g, err := dag.Open(opts.Dir, opts.Open)
	if err != nil {
		return err
	}
	defer g.S.Close()
	printWarnings(opts.IO.ErrOut, g.S.Warnings)
	view, err := render.Build(g, opts.Head, false)
	if err != nil {
		return err
	}
	headID := ""
	if view.Head >= 0 {
		headID = g.ID(view.Head)
	}
	progress := report.NewProgress(opts.IO, "searching", g.Len())
	defer progress.Done()
	hw := &hitWriter{opts: opts, headID: headID, pal: report.NewPalette(opts.IO), progress: progress,
		counts: map[string]int{render.HitVisible: 0, render.HitCovered: 0, render.HitOffBranch: 0, render.HitRelic: 0},
		hits:   []searchHitJSON{}}
	sopts := render.SearchOptions{Query: opts.Query, Regexp: opts.Regexp, Progress: progress.Add}
	if err := render.Search(ctx, view, sopts, hw.write); err != nil {
		var qe *render.QueryError
		if errors.As(err, &qe) {
			return &UsageError{Err: err}
		}
		return err
	}
	progress.Done()
	counts := hw.counts
	total := counts[render.HitVisible] + counts[render.HitCovered] + counts[render.HitOffBranch] + counts[render.HitRelic]
	if opts.JSON {
		return report.JSON(opts.IO.Out, searchResult{File: opts.File, Session: opts.Dir, Query: opts.Query, Regexp: opts.Regexp, Head: headID,
			Hits: hw.hits, Counts: counts, Total: total})
	}
	// Notes for people only (STYLE 9): piped output stays just the hits.
	if opts.IO.StderrTTY {
		noteSearchCounts(opts.IO.ErrOut, counts, total)
	}
	return nil
}

// hitWriter prints hits as the search streams them: --json collects them,
// a terminal gets two styled lines a hit, a pipe one tab-separated line.
type hitWriter struct {
	opts     *searchOptions
	headID   string
	pal      report.Palette
	progress *report.Progress
	counts   map[string]int
	hits     []searchHitJSON
}

func (w *hitWriter) write(h render.Hit) error {
	opts := w.opts
	w.counts[h.Status]++
	if opts.JSON {
		w.hits = append(w.hits, searchHitJSON{ID: h.ID, Role: string(h.Role), Line: h.Line, Summary: h.Summary,
			Status: h.Status, CoveredBy: h.CoveredBy, Summaries: nonNil(h.Summaries), Tips: nonNil(h.Tips),
			OnHead: h.OnHead, Field: h.Field, Snippet: h.Snippet})
		return nil
	}
	// Ids come from the transcript: shown to people, they are escaped
	// like the snippet (a crafted id must not drive the terminal).
	tips := make([]string, len(h.Tips))
	for k, t := range h.Tips {
		tips[k] = render.TextSafe(t)
		if t == w.headID {
			tips[k] += "*"
		}
	}
	if !opts.IO.StdoutTTY {
		return w.progress.Interrupt(func() error {
			_, err := fmt.Fprintf(opts.IO.Out, "%s\t%s\t%s\t%s\t%s\t%s\n", render.TextSafe(h.ID), h.Role, h.Status, render.TextSafe(h.CoveredBy), strings.Join(tips, ","), h.Snippet)
			return err
		})
	}
	p := w.pal
	status := h.Status
	switch h.Status {
	case render.HitVisible:
		status = p.Green(status)
	case render.HitCovered:
		status = p.Yellow("covered by " + render.TextSafe(h.CoveredBy))
	default:
		status = p.Dim(status)
	}
	line := fmt.Sprintf("%s · %s · %s", p.Bold(render.TextSafe(h.ID)), h.Role, status)
	if len(tips) > 0 {
		line += " · tips " + strings.Join(tips, ", ")
	}
	return w.progress.Interrupt(func() error {
		_, err := fmt.Fprintf(opts.IO.Out, "%s\n    %s\n", line, h.Snippet)
		return err
	})
}

// noteSearchCounts is the closing note on a terminal's stderr.
func noteSearchCounts(w io.Writer, counts map[string]int, total int) {
	if total == 0 {
		fmt.Fprintln(w, "no matches")
		return
	}
	noun := "hits"
	if total == 1 {
		noun = "hit"
	}
	fmt.Fprintf(w, "%d %s: %d visible, %d covered, %d off-branch, %d relic\n", total, noun,
		counts[render.HitVisible], counts[render.HitCovered], counts[render.HitOffBranch], counts[render.HitRelic])
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
