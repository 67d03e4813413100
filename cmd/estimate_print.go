package cmd

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// The estimate's output for people: the terminal's breakdown and the
// piped key/value lines (--json is estimateLive).

// categoryLabels are the breakdown's row names for people.
var categoryLabels = map[string]string{
	estimate.CatSystem: "system", estimate.CatTools: "tool definitions", estimate.CatSummary: "summary",
	estimate.CatUser: "user", estimate.CatAssistant: "assistant", estimate.CatToolCalls: "tool calls",
	estimate.CatToolResults: "tool results", estimate.CatThinking: "thinking", estimate.CatImages: "images",
	estimate.CatOverhead: "chat format overhead",
}

func share(n, total int) string {
	if total == 0 {
		return "0.0%"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(total))
}

func encodingLabel(r *estimate.Result) string {
	if r.EncodingIsProxy {
		return r.Encoding + " (proxy)"
	}
	return r.Encoding + " (exact)"
}

func writeEstimateTTY(ios *report.IOStreams, pal report.Palette, r *estimate.Result, compactAt float64) error {
	w := ios.Out
	if r.Head == "" && ios.StderrTTY {
		fmt.Fprintf(ios.ErrOut, "ctxfold: %s is empty: nothing to measure\n", r.Session)
	}
	head := ""
	if r.Head != "" {
		head = " · HEAD " + render.TextSafe(r.Head)
	}
	// Lines wrap at spaces to the terminal's width: the terminal itself
	// would cut them mid-word.
	width := ios.TerminalWidth
	line := func(format string, args ...any) {
		fmt.Fprintln(w, report.Wrap(fmt.Sprintf(format, args...), width))
	}
	// A transcript file's block is named by the file, not by its cache
	// session (with several files, which is which).
	name := r.Session
	if r.File != "" {
		name = render.TextSafe(r.File)
	}
	line("%s  %s · %s%s", pal.Bold(name), r.Model, encodingLabel(r), head)
	if err := writeCategoryTable(w, r); err != nil {
		return err
	}
	if c := r.Calibration; c != nil {
		// The part of the prompt the transcript does not hold, as its own
		// labelled line (it is not a category of the view).
		switch {
		case c.Anchor == estimate.MethodProject:
			line("+ unrecorded prefix (the project's earlier session's first request, no usage recorded yet): %s tokens", report.Thousands(c.UnrecordedTokens))
		case c.Requests == 0:
			line("+ unrecorded prefix (the prior, no usage recorded yet): %s tokens", report.Thousands(c.UnrecordedTokens))
		default:
			line("+ unrecorded prefix (inferred from recorded usage): %s tokens", report.Thousands(c.UnrecordedTokens))
		}
		if c.Slope != 1 {
			line("× slope %.3f on the view's own tokens (fitted on recorded usage)", c.Slope)
		}
		if c.FramingTokens != 0 {
			source := "fitted on recorded usage"
			if c.Method != estimate.MethodFraming {
				source = "the prior rate, until three steps are recorded"
			}
			line("+ framing since the latest request (%.2f a framing token, %s): %s tokens", c.FramingRate, source, report.Thousands(c.FramingTokens))
		}
	}
	if r.Window > 0 {
		line("%s %.1f%% of the %s window · %.1f%% of the %s input budget (reserve %s, %s)",
			occupancyBar(pal, r.Ratio, 30), 100*r.Ratio, report.Thousands(r.Window), r.BudgetPct, report.Thousands(r.InputBudget), report.Thousands(r.OutputReserve), r.BudgetBasis)
		verdict := "no"
		if r.ShouldCompact {
			verdict = pal.Red("yes")
		}
		line("should compact: %s (at %g%% of the input budget)", verdict, 100*compactAt)
	}
	if c := r.Calibration; c != nil && c.Requests == 0 {
		// No request recorded yet: the prior (docs/ACCURACY.md "The prior").
		line("calibrated estimate: %s tokens (%.1f%% of the input budget; raw %.1f%%), method %s: no request recorded yet, %s tokens added for what the client sends beside the transcript",
			report.Thousands(c.CalibratedTotal), c.CalibratedBudgetPct, r.RawBudgetPct, render.TextSafe(c.Method), report.Thousands(c.UnrecordedTokens))
	} else if c != nil {
		line("calibrated estimate: %s tokens (%.1f%% of the input budget; raw %.1f%%), method %s, exact at %s (measured %s vs estimated %s); %d request(s): next-request median error %.1f%%, raw median error %.1f%%, worst %+.1f%% at %s",
			report.Thousands(c.CalibratedTotal), c.CalibratedBudgetPct, r.RawBudgetPct, c.Method, render.TextSafe(c.LatestNode), report.Thousands(int(c.Measured)), report.Thousands(c.Estimated),
			c.Requests, 100*c.NextMedianError, 100*c.MedianRelError, 100*c.WorstRelError, render.TextSafe(c.WorstNode))
	}
	if len(r.Nodes) > 0 {
		return writeNodeTable(w, r)
	}
	return nil
}

// writeCategoryTable is the breakdown: one row per category that counts,
// the total as its footer.
func writeCategoryTable(w io.Writer, r *estimate.Result) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: []tw.Align{tw.AlignLeft, tw.AlignRight, tw.AlignRight}}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: []tw.Align{tw.AlignLeft, tw.AlignRight, tw.AlignRight}}),
		tablewriter.WithFooterAlignmentConfig(tw.CellAlignment{PerColumn: []tw.Align{tw.AlignLeft, tw.AlignRight, tw.AlignRight}}),
	)
	t.Header("category", "tokens", "share")
	for _, c := range estimate.Categories {
		n := r.Categories[c]
		if n == 0 {
			continue
		}
		if err := t.Append([]string{categoryLabels[c], report.Thousands(n), share(n, r.Total)}); err != nil {
			return err
		}
	}
	t.Footer("total", report.Thousands(r.Total), share(r.Total, r.Total))
	return t.Render()
}

// writeNodeTable is --nodes: every rendered node's count.
func writeNodeTable(w io.Writer, r *estimate.Result) error {
	nt := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: []tw.Align{tw.AlignLeft, tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignRight}}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: []tw.Align{tw.AlignLeft, tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignRight}}),
	)
	nt.Header("node", "role", "category", "content", "tokens")
	for _, n := range r.Nodes {
		if err := nt.Append([]string{render.TextSafe(n.ID), n.Role, categoryLabels[n.Category], report.Thousands(n.ContentTokens), report.Thousands(n.Tokens)}); err != nil {
			return err
		}
	}
	return nt.Render()
}

// occupancyBar draws ratio as a bar coloured by occupancy:
// green below 60%, yellow below 80%, red from 80%.
func occupancyBar(pal report.Palette, ratio float64, width int) string {
	filled := int(math.Round(math.Min(ratio, 1) * float64(width)))
	if ratio > 0 && filled == 0 {
		filled = 1
	}
	bar := strings.Repeat("█", filled)
	switch {
	case ratio >= 0.80:
		bar = pal.Red(bar)
	case ratio >= 0.60:
		bar = pal.Yellow(bar)
	default:
		bar = pal.Green(bar)
	}
	return "[" + bar + pal.Dim(strings.Repeat("░", width-filled)) + "]"
}

// writeEstimatePlain is the piped form: tab-separated key/value lines, one
// per figure and one per category ("category NAME TOKENS"), no colour.
func writeEstimatePlain(w io.Writer, r *estimate.Result) error {
	var b strings.Builder
	kv := func(k string, v any) { fmt.Fprintf(&b, "%s\t%v\n", k, v) }
	if r.File != "" {
		kv("file", render.TextSafe(r.File))
	}
	kv("session", r.Session)
	if r.Head != "" {
		kv("head", render.TextSafe(r.Head))
	}
	kv("model", r.Model)
	kv("encoding", r.Encoding)
	kv("encoding_is_proxy", r.EncodingIsProxy)
	kv("window", r.Window)
	kv("output_reserve", r.OutputReserve)
	kv("input_budget", r.InputBudget)
	for _, c := range estimate.Categories {
		fmt.Fprintf(&b, "category\t%s\t%d\n", c, r.Categories[c])
	}
	kv("total", r.Total)
	kv("ratio", strconv.FormatFloat(r.Ratio, 'f', 4, 64))
	kv("budget_pct", strconv.FormatFloat(r.BudgetPct, 'f', 2, 64))
	kv("should_compact", r.ShouldCompact)
	kv("budget_basis", r.BudgetBasis)
	kv("raw_budget_pct", strconv.FormatFloat(r.RawBudgetPct, 'f', 2, 64))
	kv("raw_should_compact", r.RawShouldCompact)
	if c := r.Calibration; c != nil {
		kv("calibrated_total", c.CalibratedTotal)
		kv("calibrated_budget_pct", strconv.FormatFloat(c.CalibratedBudgetPct, 'f', 2, 64))
		kv("calibration_method", c.Method)
		kv("calibration_unrecorded_tokens", c.UnrecordedTokens)
		kv("calibration_slope", strconv.FormatFloat(c.Slope, 'f', 4, 64))
		if c.FramingRate != 0 {
			kv("calibration_framing_rate", strconv.FormatFloat(c.FramingRate, 'f', 4, 64))
			kv("calibration_framing_tokens", c.FramingTokens)
		}
		kv("calibration_next_median_error", strconv.FormatFloat(c.NextMedianError, 'f', 4, 64))
		kv("calibration_latest_node", render.TextSafe(c.LatestNode))
		kv("calibration_ratio", strconv.FormatFloat(c.Ratio, 'f', 4, 64))
		kv("calibration_requests", c.Requests)
		kv("calibration_median_rel_error", strconv.FormatFloat(c.MedianRelError, 'f', 4, 64))
		kv("calibration_worst_rel_error", strconv.FormatFloat(c.WorstRelError, 'f', 4, 64))
		kv("calibration_worst_node", render.TextSafe(c.WorstNode))
	}
	for _, n := range r.Nodes {
		fmt.Fprintf(&b, "node\t%s\t%s\t%s\t%d\t%d\n", render.TextSafe(n.ID), n.Role, n.Category, n.ContentTokens, n.Tokens)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
