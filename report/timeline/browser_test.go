package timeline

import (
	"bytes"
	"context"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
)

// page is a headless Chromium tab with the network off, and what the page
// did that it must not: console errors, exceptions, requests that are not
// the file itself.
type page struct {
	ctx context.Context
	mu  sync.Mutex
	bad []string
}

// needChromium finds Debian's chromium: required in CI (.ci/run installs
// it), its absence skips the test otherwise.
func needChromium(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is required in CI (apt-get install -y chromium)")
		}
		t.Skip("chromium not installed (apt-get install -y chromium); skipping")
	}
	return p
}

func newPage(t testing.TB) *page {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(needChromium(t)),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		// The network off: every request goes to a proxy that does not
		// exist, and no name resolves.
		chromedp.Flag("proxy-server", "127.0.0.1:9"),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.WindowSize(1100, 900),
		chromedp.UserDataDir(t.TempDir()),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	p := &page{ctx: ctx}
	err := chromedp.Listen(ctx, func(ev any) {
		var msg string
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			msg = "exception: " + e.ExceptionDetails.Text
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning {
				msg = "console." + string(e.Type)
			}
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				msg = "log: " + e.Entry.Text
			}
		case *network.EventRequestWillBeSent:
			if !strings.HasPrefix(e.Request.URL, "file://") {
				msg = "request: " + e.Request.URL
			}
		}
		if msg != "" {
			p.mu.Lock()
			p.bad = append(p.bad, msg)
			p.mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *page) open(t testing.TB, d *Data) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "report.html")
	if err := WriteFile(path, d); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(p.ctx, chromedp.Navigate("file://"+path), chromedp.WaitReady(chromedp.CSS(`body[data-ready="1"]`))); err != nil {
		t.Fatal(err)
	}
}

func (p *page) clean(t testing.TB) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.bad) > 0 {
		t.Errorf("the page misbehaved:\n%s", strings.Join(p.bad, "\n"))
	}
}

func evalIn[T any](t testing.TB, p *page, expr string) T {
	t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// checkPage: one mark per recorded request, the compaction markers are
// audit --all's summaries in order, the page fetched nothing and logged
// no error.
func checkPage(t *testing.T, p *page, d *Data, dir string) {
	t.Helper()
	marks := evalIn[int](t, p, `document.querySelectorAll("#chart g.mark").length`)
	sub := evalIn[int](t, p, `document.querySelectorAll("#chart g.mark.subagent").length`)
	wantSub := 0
	for _, r := range d.Requests {
		if r.Subagent {
			wantSub++
		}
	}
	if marks != len(d.Requests) || sub != wantSub {
		t.Errorf("%d marks (%d sub-agent), want %d (%d)", marks, sub, len(d.Requests), wantSub)
	}
	got := evalIn[[]string](t, p, `Array.from(document.querySelectorAll("#chart g.compaction")).map(g => g.dataset.summary)`)
	var want []string
	for _, a := range auditAll(t, dir) {
		want = append(want, a.SummaryID)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("compaction markers %v, audit --all %v", got, want)
	}
	n := evalIn[int](t, p, `JSON.parse(document.getElementById("ctxfold-data").textContent).requests.length`)
	if n != len(d.Requests) {
		t.Errorf("embedded data has %d requests, want %d", n, len(d.Requests))
	}
	// Hover: each mark's tooltip gives the request's time, model and figures.
	tip := evalIn[string](t, p, `document.querySelector("#chart g.mark[data-index='1'] title").textContent`)
	r1 := d.Requests[1]
	if !strings.Contains(tip, r1.Time) || !strings.Contains(tip, r1.Model) || !strings.Contains(tip, "recorded "+num(r1.Recorded)) {
		t.Errorf("tooltip of request 2: %q (time %s, model %s, recorded %d)", tip, r1.Time, r1.Model, r1.Recorded)
	}
	if r := evalIn[int](t, p, `performance.getEntriesByType("resource").length`); r != 0 {
		t.Errorf("the page loaded %d resources", r)
	}
	p.clean(t)
}

func TestPageInBrowser(t *testing.T) {
	p := newPage(t)
	dir := importFile(t, interop("compact"))
	d := build(t, dir)
	p.open(t, d)
	checkPage(t, p, d, dir)
}

// The shared spotter session (a real Claude Code transcript with a
// compaction and sub-agents): the checks above, and its chart's screenshot
// compared structurally with the data (checkScreenshot).
// CTXFOLD_REPORT_SCREENSHOT=FILE saves the timeline's screenshot (the
// README's image).
func TestSpotterInBrowser(t *testing.T) {
	file := sessiontest.External(t, "claude-code", "marot-spotter", "258c7280-ae70-4798-800f-63464d01a85d.jsonl")
	p := newPage(t)
	dir := importFile(t, file)
	d := build(t, dir)
	if len(d.Compactions) == 0 || len(d.Requests) < 100 {
		t.Fatalf("the spotter session: %d requests, %d compactions", len(d.Requests), len(d.Compactions))
	}
	p.open(t, d)
	checkPage(t, p, d, dir)
	checkScreenshot(t, p, d)
	// The page's figures are the series the accuracy check's cuts agree
	// with (TestSeriesMatchesCuts), from an estimate made apart.
	type fig struct {
		Node      string `json:"node"`
		Recorded  int64  `json:"recorded"`
		Estimated *int   `json:"estimated"`
		Subagent  bool   `json:"subagent"`
	}
	embedded := evalIn[[]fig](t, p, `JSON.parse(document.getElementById("ctxfold-data").textContent).requests`)
	series := history(t, dir)
	k := 0
	for _, e := range embedded {
		if e.Subagent {
			continue
		}
		if k >= len(series) || e.Node != series[k].Node || e.Recorded != series[k].Recorded || (k > 0) != (e.Estimated != nil) || k > 0 && *e.Estimated != series[k].Estimated {
			t.Fatalf("embedded request %d %+v, series %+v", k, e, series[min(k, len(series)-1)])
		}
		k++
	}
	if k != len(series) {
		t.Errorf("%d embedded requests, %d in the series", k, len(series))
	}
	if out := os.Getenv("CTXFOLD_REPORT_SCREENSHOT"); out != "" {
		shot, err := chromedp.Run(p.ctx, chromedp.Screenshot(chromedp.CSS("#timeline")))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// markBox is a drawn element's centre in the chart's screenshot.
type markBox struct {
	Index   int     `json:"index"`
	X       float64 `json:"x"`
	Y       float64 `json:"y"`
	Subagnt bool    `json:"sub"`
}

// checkScreenshot compares the chart as Chromium painted it with the
// data: every estimate mark is painted in its colour where the page puts
// it, the marks run left to right and their heights follow the recorded
// figures linearly, and each compaction's line is painted red. A broken
// style, scale or layout fails it.
func checkScreenshot(t *testing.T, p *page, d *Data) {
	t.Helper()
	shot, err := chromedp.Run(p.ctx, chromedp.Screenshot(chromedp.CSS("#chart")))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	width := evalIn[float64](t, p, `document.getElementById("chart").getBoundingClientRect().width`)
	scale := float64(img.Bounds().Dx()) / width
	rel := func(sel string) string {
		return `(() => { const c = document.getElementById("chart").getBoundingClientRect();
			return Array.from(document.querySelectorAll(` + "`" + sel + "`" + `)).map(e => { const r = e.getBoundingClientRect();
			const g = e.closest("g"); return {index: +(g.dataset.index || -1), x: r.x + r.width/2 - c.x, y: r.y + r.height/2 - c.y, sub: g.classList.contains("subagent")}; }); })()`
	}
	est := evalIn[[]markBox](t, p, rel("#chart g.mark circle.est"))
	rec := evalIn[[]markBox](t, p, rel("#chart g.mark circle.rec"))
	lines := evalIn[[]markBox](t, p, rel("#chart g.compaction line"))
	orange := color.RGBA{0xd9, 0x77, 0x06, 0xff}
	painted := 0
	for _, m := range est {
		if near(img.At(int(m.X*scale), int(m.Y*scale)), orange, 40) {
			painted++
		}
	}
	if len(est) == 0 || painted < len(est)*95/100 {
		t.Errorf("%d of %d estimate marks painted in their colour", painted, len(est))
	}
	// Left to right, and height linear in the recorded input.
	var xs, ys, vs []float64
	for k, m := range rec {
		if k > 0 && m.X <= rec[k-1].X {
			t.Errorf("mark %d at x %.1f, not right of %.1f", m.Index, m.X, rec[k-1].X)
		}
		xs, ys, vs = append(xs, m.X), append(ys, m.Y), append(vs, float64(d.Requests[m.Index].Recorded))
	}
	if r := correlation(ys, vs); r > -0.9999 {
		t.Errorf("mark heights do not follow the recorded figures (correlation %.5f, want -1)", r)
	}
	red := color.RGBA{0xdc, 0x26, 0x26, 0xff}
	for _, l := range lines {
		if !near(img.At(int(l.X*scale), int(l.Y*scale)), red, 60) {
			t.Errorf("compaction line at x %.1f is painted %v", l.X, img.At(int(l.X*scale), int(l.Y*scale)))
		}
	}
	if len(lines) != len(d.Compactions) {
		t.Errorf("%d compaction lines, %d compactions", len(lines), len(d.Compactions))
	}
}

func near(c color.Color, want color.RGBA, tol int) bool {
	r, g, b, _ := c.RGBA()
	d := func(a uint32, w uint8) int { return int(math.Abs(float64(int(a>>8) - int(w)))) }
	return d(r, want.R) <= tol && d(g, want.G) <= tol && d(b, want.B) <= tol
}

func correlation(a, b []float64) float64 {
	n := float64(len(a))
	var sa, sb, saa, sbb, sab float64
	for k := range a {
		sa, sb = sa+a[k], sb+b[k]
		saa, sbb, sab = saa+a[k]*a[k], sbb+b[k]*b[k], sab+a[k]*b[k]
	}
	return (n*sab - sa*sb) / math.Sqrt((n*saa-sa*sa)*(n*sbb-sb*sb))
}

// A session whose ids, content, tool names and facts are markup and
// script: the page shows them as text and runs none of them.
func TestHostilePageInBrowser(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "hostile")
	d, err := Build(context.Background(), dir, Options{Estimate: estimate.Options{Model: "gpt-4o"}, Largest: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Compactions) == 0 || len(d.Largest) == 0 {
		t.Fatalf("the hostile fixture: %d compactions, %d nodes listed", len(d.Compactions), len(d.Largest))
	}
	p := newPage(t)
	p.open(t, d)
	clean := evalIn[bool](t, p, `window.__pwned === undefined && !document.title.includes("pwned") &&
		document.scripts.length === 2 && document.querySelectorAll("img, iframe, body > svg:not(#chart), #largest svg, .dropped li *:not(.kind), #largest td *:not(code)").length === 0`)
	if !clean {
		t.Errorf("a payload ran or left markup: __pwned=%s title=%q", evalIn[string](t, p, `String(window.__pwned)`), evalIn[string](t, p, `document.title`))
	}
	text := evalIn[string](t, p, `document.getElementById("largest").textContent`)
	if !strings.Contains(text, "onerror") {
		t.Errorf("the payloads are not shown as text:\n%s", text)
	}
	p.clean(t)
}
