package cmd

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
)

// fanSummary is the line that ends estimate over a folder or many
// transcripts: how many were measured, how full they are, how many should
// be compacted and how many already were.
type fanSummary struct {
	total, failed, shouldCompact, compacted int
	// pcts are the budget percentages of the results that have a budget.
	pcts     []float64
	fullest  string
	maxPct   float64
	updates  map[string]int
	anyTotal int
}

func (s *fanSummary) add(arg string, e *live.Entry, err error, r *estimate.Result, summaries int) {
	s.total++
	if e != nil {
		if s.updates == nil {
			s.updates = map[string]int{}
		}
		s.updates[e.Update]++
	}
	if err != nil || r == nil {
		s.failed++
		return
	}
	s.anyTotal += r.Total
	if summaries > 0 || (summaries < 0 && r.Categories[estimate.CatSummary] > 0) {
		s.compacted++
	}
	if r.InputBudget <= 0 {
		return
	}
	if r.ShouldCompact {
		s.shouldCompact++
	}
	s.pcts = append(s.pcts, r.BudgetPct)
	if len(s.pcts) == 1 || r.BudgetPct > s.maxPct {
		s.maxPct = r.BudgetPct
		s.fullest = arg
		if e != nil {
			s.fullest = e.File
		}
	}
}

// line is the summary, e.g. "12 transcripts: 11 measured, 1 unreadable ·
// budget median 41.2%, max 97.0% (a.jsonl) · 3 should compact · 2
// compacted · cache: 9 fresh, 3 unchanged".
func (s *fanSummary) line() string {
	parts := []string{fmt.Sprintf("%s: %d measured", plural(s.total, "transcript"), s.total-s.failed)}
	if s.failed > 0 {
		parts[0] += fmt.Sprintf(", %d unreadable", s.failed)
	}
	if len(s.pcts) > 0 {
		sorted := append([]float64(nil), s.pcts...)
		sort.Float64s(sorted)
		med := sorted[len(sorted)/2]
		if len(sorted)%2 == 0 {
			med = (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
		}
		parts = append(parts, fmt.Sprintf("budget median %.1f%%, max %.1f%% (%s)", med, s.maxPct, render.TextSafe(s.fullest)))
		parts = append(parts, fmt.Sprintf("%d should compact", s.shouldCompact))
	}
	parts = append(parts, fmt.Sprintf("%d compacted", s.compacted), report.Thousands(s.anyTotal)+" tokens in all")
	if len(s.updates) > 0 {
		var u []string
		for _, k := range []string{live.Fresh, live.Appended, live.Unchanged} {
			if n := s.updates[k]; n > 0 {
				u = append(u, fmt.Sprintf("%d %s", n, k))
			}
		}
		parts = append(parts, "cache: "+strings.Join(u, ", "))
	}
	return strings.Join(parts, " · ")
}

// print writes the summary after the per-argument output: on stdout for
// people; with --json only on a terminal's stderr, so the stream stays one
// object per argument.
//
// Piped, stdout carries only the results (one block per file): the
// summary line is a note on stderr then, never a prose line ending the
// data a script reads (issue 44).
func (s *fanSummary) print(ios *report.IOStreams, json bool) {
	switch {
	case !json && ios.StdoutTTY:
		fmt.Fprintf(ios.Out, "\n%s\n", s.line())
	case !json || ios.StderrTTY:
		fmt.Fprintf(ios.ErrOut, "ctxfold: %s\n", s.line())
	}
}
