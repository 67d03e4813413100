package timeline

import (
	"bufio"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/report"
)

// MaxMarks is how many requests the timeline draws one mark each for;
// past it every k-th is drawn (the embedded data keeps them all) and the
// page says so, which keeps a long session's page small.
const MaxMarks = 3000

// Chart geometry (SVG user units).
const (
	chartW, chartH         = 1000.0, 340.0
	padL, padR, padT, padB = 64.0, 16.0, 16.0, 36.0
)

// WriteJSON writes d as --json prints it: the object the page embeds.
func WriteJSON(w io.Writer, d *Data) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}

// WriteHTML writes the self-contained page: inline CSS and SVG, the data
// as <script type="application/json" id="ctxfold-data">, and one small
// inline script that only marks the page ready (nothing is fetched).
func WriteHTML(w io.Writer, d *Data) error {
	bw := bufio.NewWriter(w)
	data, err := json.Marshal(d) // escapes <, > and & for the script element
	if err != nil {
		return err
	}
	title := "ctxfold report: " + d.Session
	if d.File != "" {
		title = "ctxfold report: " + d.File
	}
	fmt.Fprintf(bw, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width\">\n<title>%s</title>\n<style>%s</style></head>\n<body>\n", esc(title), css)
	fmt.Fprintf(bw, "<h1>%s</h1>\n", esc(title))
	fmt.Fprintf(bw, "<p class=\"meta\">model <b>%s</b> · HEAD <code>%s</code> · %d recorded requests · %d compactions · now %s tokens (raw %s)</p>\n",
		esc(orDash(d.Model)), esc(d.Head), len(d.Requests), len(d.Compactions), num(int64(d.Calibrated)), num(int64(d.Total)))
	for _, wmsg := range d.Warnings {
		fmt.Fprintf(bw, "<p class=\"warn\">%s</p>\n", esc(wmsg))
	}
	bw.WriteString("<section id=\"timeline\"><h2>Occupancy, request by request</h2>\n")
	writeChart(bw, d)
	bw.WriteString("</section>\n")
	writeFills(bw, d)
	writeCompactions(bw, d)
	fmt.Fprintf(bw, "<script type=\"application/json\" id=\"ctxfold-data\">%s</script>\n", data)
	bw.WriteString("<script>document.body.dataset.ready = \"1\";</script>\n</body></html>\n")
	return bw.Flush()
}

// plotted is a request with its x position.
type plotted struct {
	r Request
	x float64
}

// writeChart draws the timeline: recorded and estimated marks, the
// window, budget and threshold lines, and the compactions.
func writeChart(w *bufio.Writer, d *Data) {
	if len(d.Requests) == 0 {
		w.WriteString("<p class=\"empty\">No recorded request: the transcript holds no provider usage to draw.</p>\n")
		return
	}
	order, stride := drawOrder(d)
	if stride > 1 {
		fmt.Fprintf(w, "<p class=\"note\" id=\"downsampled\">%d requests: every %d-th is drawn (%d marks); the embedded data holds them all.</p>\n",
			len(d.Requests), stride, len(order))
	}
	top := float64(max(d.Window, d.InputBudget, d.CompactAt, 1))
	for _, r := range d.Requests {
		top = math.Max(top, float64(r.Recorded))
		if r.Estimated != nil {
			top = math.Max(top, float64(*r.Estimated))
		}
	}
	top *= 1.05
	y := func(v float64) float64 { return padT + (chartH-padT-padB)*(1-v/top) }
	n := len(order)
	x := func(k int) float64 {
		if n == 1 {
			return (padL + chartW - padR) / 2
		}
		return padL + (chartW-padL-padR)*float64(k)/float64(n-1)
	}
	pts := make([]plotted, n)
	for k, r := range order {
		pts[k] = plotted{r, x(k)}
	}
	fmt.Fprintf(w, "<svg id=\"chart\" viewBox=\"0 0 %g %g\" role=\"img\" aria-label=\"recorded and estimated input tokens per request\">\n", chartW, chartH)
	writeAxes(w, y, top)
	writeLimit(w, "window", "window", d.Window, y)
	writeLimit(w, "budget", "input budget", d.InputBudget, y)
	writeLimit(w, "threshold", "compaction threshold", d.CompactAt, y)
	writeLines(w, pts, y)
	writeCompactionMarks(w, d, pts, y)
	for _, p := range pts {
		writeMark(w, p, y)
	}
	w.WriteString("</svg>\n<p class=\"legend\"><span class=\"k rec\"></span>recorded input (client) <span class=\"k est\"></span>ctxfold's calibrated estimate at the same cut <span class=\"k sub\"></span>sub-agent request (recorded) <span class=\"k cmp\"></span>compaction (before → after)</p>\n")
}

// drawOrder is the requests by time when every one records it (an
// imported sub-agent's file follows the main conversation's, but its
// requests ran during it), else in file order; every stride-th past
// MaxMarks.
func drawOrder(d *Data) ([]Request, int) {
	all := append([]Request(nil), d.Requests...)
	timed := true
	for _, r := range all {
		timed = timed && r.Time != ""
	}
	sort.SliceStable(all, func(a, b int) bool {
		if timed && all[a].Time != all[b].Time {
			return all[a].Time < all[b].Time
		}
		return all[a].fileIdx < all[b].fileIdx
	})
	stride := 1
	if len(all) > MaxMarks {
		stride = (len(all) + MaxMarks - 1) / MaxMarks
		var kept []Request
		for k := 0; k < len(all); k += stride {
			kept = append(kept, all[k])
		}
		all = kept
	}
	return all, stride
}

func writeAxes(w *bufio.Writer, y func(float64) float64, top float64) {
	step := niceStep(top / 5)
	for v := 0.0; v <= top; v += step {
		fmt.Fprintf(w, "<line class=\"grid\" x1=\"%g\" x2=\"%g\" y1=\"%.1f\" y2=\"%.1f\"/><text class=\"tick\" x=\"%g\" y=\"%.1f\">%s</text>\n",
			padL, chartW-padR, y(v), y(v), padL-6, y(v)+4, short(v))
	}
	fmt.Fprintf(w, "<text class=\"axis\" x=\"%g\" y=\"%g\">requests →</text>\n", chartW-padR-90, chartH-8)
}

func writeLimit(w *bufio.Writer, class, label string, v int, y func(float64) float64) {
	if v <= 0 {
		return
	}
	fmt.Fprintf(w, "<g class=\"limit %s\"><line x1=\"%g\" x2=\"%g\" y1=\"%.1f\" y2=\"%.1f\"/><text x=\"%g\" y=\"%.1f\">%s %s</text></g>\n",
		class, padL, chartW-padR, y(float64(v)), y(float64(v)), padL+4, y(float64(v))-4, label, num(int64(v)))
}

func writeLines(w *bufio.Writer, pts []plotted, y func(float64) float64) {
	var rec, est strings.Builder
	for _, p := range pts {
		if p.r.Subagent {
			continue
		}
		fmt.Fprintf(&rec, "%.1f,%.1f ", p.x, y(float64(p.r.Recorded)))
		if p.r.Estimated != nil {
			fmt.Fprintf(&est, "%.1f,%.1f ", p.x, y(float64(*p.r.Estimated)))
		}
	}
	fmt.Fprintf(w, "<polyline class=\"line rec\" points=\"%s\"/>\n<polyline class=\"line est\" points=\"%s\"/>\n", rec.String(), est.String())
}

func writeMark(w *bufio.Writer, p plotted, y func(float64) float64) {
	r := p.r
	class := "mark"
	if r.Subagent {
		class += " subagent"
	}
	tip := fmt.Sprintf("request %d · %s · %s\nrecorded %s", r.Index+1, orDash(r.Time), orDash(r.Model), num(r.Recorded))
	if r.Estimated != nil {
		tip += fmt.Sprintf("\nestimated %s (raw %s)", num(int64(*r.Estimated)), num(int64(r.Raw)))
		if !r.Calibrated {
			tip += ", uncalibrated: the first request"
		}
	}
	if r.Subagent {
		tip += "\nsub-agent"
	}
	fmt.Fprintf(w, "<g class=\"%s\" data-index=\"%d\"><title>%s</title>", class, r.Index, esc(tip))
	if r.Subagent {
		fmt.Fprintf(w, "<rect class=\"sub\" x=\"%.1f\" y=\"%.1f\" width=\"6\" height=\"6\"/>", p.x-3, y(float64(r.Recorded))-3)
	} else {
		fmt.Fprintf(w, "<circle class=\"rec\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.2\"/>", p.x, y(float64(r.Recorded)))
	}
	if r.Estimated != nil {
		fmt.Fprintf(w, "<circle class=\"est\" cx=\"%.1f\" cy=\"%.1f\" r=\"2\"/>", p.x, y(float64(*r.Estimated)))
	}
	w.WriteString("</g>\n")
}

// writeCompactionMarks draws each compaction between the request before
// it and the next, with its before → after figures.
func writeCompactionMarks(w *bufio.Writer, d *Data, pts []plotted, y func(float64) float64) {
	xOf := map[int]float64{}
	for _, p := range pts {
		if !p.r.Subagent {
			xOf[p.r.Index] = p.x
		}
	}
	for k, c := range d.Compactions {
		x := padL
		if a, ok := xOf[c.AfterRequest]; ok {
			x = a
			if b, ok := xOf[c.AfterRequest+1]; ok {
				x = (a + b) / 2
			}
		}
		label := num(c.Before) + " → " + num(c.After)
		if c.AfterBasis == "" {
			label = num(c.Before) + " → ?"
		}
		tip := fmt.Sprintf("compaction by %s (%s) · %s\n%s tokens before → %s after (%s)\nfacts kept %d of %d (%.0f%%)",
			c.Source, c.Status, orDash(c.Time), num(c.Before), num(c.After), orDash(c.AfterBasis), c.Kept, c.Facts, c.SurvivalPct)
		fmt.Fprintf(w, "<g class=\"compaction %s\" data-summary=\"%s\"><title>%s</title><line x1=\"%.1f\" x2=\"%.1f\" y1=\"%g\" y2=\"%g\"/>",
			esc(c.Source), esc(c.Summary), esc(tip), x, x, padT, chartH-padB)
		fmt.Fprintf(w, "<a href=\"#c%d\"><text x=\"%.1f\" y=\"%g\">%s</text></a></g>\n", k+1, x+3, padT+12+float64(k%4)*13, esc(label))
	}
}

// writeFills draws what fills the window now: the categories as a stacked
// bar and the largest nodes grouped by tool.
func writeFills(w *bufio.Writer, d *Data) {
	w.WriteString("<section id=\"fills\"><h2>What fills the window now</h2>\n<div class=\"bar\" id=\"categories\">")
	total := 0
	for _, c := range estimate.Categories {
		total += d.Categories[c]
	}
	for k, c := range estimate.Categories {
		v := d.Categories[c]
		if v <= 0 || total == 0 {
			continue
		}
		pct := 100 * float64(v) / float64(total)
		fmt.Fprintf(w, "<span class=\"seg c%d\" data-category=\"%s\" style=\"width:%.3f%%\" title=\"%s: %s tokens (%.1f%%)\"></span>", k, c, pct, c, num(int64(v)), pct)
	}
	w.WriteString("</div>\n<p class=\"legend\">")
	for k, c := range estimate.Categories {
		if v := d.Categories[c]; v > 0 {
			fmt.Fprintf(w, "<span class=\"k c%d\"></span>%s %s ", k, c, num(int64(v)))
		}
	}
	w.WriteString("</p>\n")
	writeLargest(w, d)
	w.WriteString("</section>\n")
}

func writeLargest(w *bufio.Writer, d *Data) {
	groups := map[string][]LargeNode{}
	var order []string
	sums := map[string]int{}
	for _, n := range d.Largest {
		t := n.Tool
		if t == "" {
			t = "(no tool) " + n.Role
		}
		if _, ok := groups[t]; !ok {
			order = append(order, t)
		}
		groups[t] = append(groups[t], n)
		sums[t] += n.Tokens
	}
	sort.SliceStable(order, func(a, b int) bool { return sums[order[a]] > sums[order[b]] })
	fmt.Fprintf(w, "<h3>The %d largest nodes of the view, by tool</h3>\n<table id=\"largest\"><tr><th>id</th><th>role</th><th>category</th><th class=\"n\">tokens</th><th>snippet</th></tr>\n", len(d.Largest))
	for _, t := range order {
		fmt.Fprintf(w, "<tr class=\"group\"><th colspan=\"3\">%s</th><th class=\"n\">%s</th><th>%d nodes</th></tr>\n", esc(t), num(int64(sums[t])), len(groups[t]))
		for _, n := range groups[t] {
			fmt.Fprintf(w, "<tr class=\"node\"><td><code>%s</code></td><td>%s</td><td>%s</td><td class=\"n\">%s</td><td class=\"snip\">%s</td></tr>\n",
				esc(n.ID), esc(n.Role), esc(n.Category), num(int64(n.Tokens)), esc(n.Snippet))
		}
	}
	w.WriteString("</table>\n")
}

// writeCompactions lists each compaction's survival by kind and the facts
// it dropped, most valuable first.
func writeCompactions(w *bufio.Writer, d *Data) {
	w.WriteString("<section id=\"compactions\"><h2>Compactions: what survived</h2>\n")
	if len(d.Compactions) == 0 {
		w.WriteString("<p class=\"empty\">The session was never compacted.</p>\n")
	}
	for k, c := range d.Compactions {
		fmt.Fprintf(w, "<article class=\"audit\" id=\"c%d\"><h3>%d. by %s (%s) <code>%s</code></h3>\n<p>%s → %s tokens · %d of %d facts kept (%.1f%%)</p>\n",
			k+1, k+1, esc(c.Source), esc(c.Status), esc(c.Summary), num(c.Before), num(c.After), c.Kept, c.Facts, c.SurvivalPct)
		w.WriteString("<table class=\"kinds\"><tr><th>kind</th><th class=\"n\">kept</th><th class=\"n\">of</th><th>survival</th></tr>\n")
		for _, ks := range c.Kinds {
			if ks.Total == 0 {
				continue
			}
			fmt.Fprintf(w, "<tr><td>%s</td><td class=\"n\">%d</td><td class=\"n\">%d</td><td><span class=\"meter\"><span style=\"width:%.1f%%\"></span></span> %.0f%%</td></tr>\n",
				ks.Kind, ks.Kept, ks.Total, ks.SurvivalPct, ks.SurvivalPct)
		}
		w.WriteString("</table>\n<ol class=\"dropped\">\n")
		for _, f := range c.Dropped {
			fmt.Fprintf(w, "<li><span class=\"kind\">%s</span> %s</li>\n", f.Kind, esc(f.Text))
		}
		w.WriteString("</ol>\n")
		if c.DroppedMore > 0 {
			fmt.Fprintf(w, "<p class=\"note\">and %d more dropped facts (ctxfold audit --summary %s).</p>\n", c.DroppedMore, esc(c.Summary))
		}
		w.WriteString("</article>\n")
	}
	w.WriteString("</section>\n")
}

func esc(s string) string { return html.EscapeString(s) }

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// num groups thousands: 123,456.
func num(v int64) string { return report.Thousands(int(v)) }

func short(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.0fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}
