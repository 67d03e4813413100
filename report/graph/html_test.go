package graph

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// browser starts Debian's chromium headless, isolated (fresh profile, no
// background networking), or skips when it is missing outside CI.
func browser(t testing.TB) context.Context {
	t.Helper()
	exe := needTool(t, "chromium", "apt-get install -y chromium")
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	return ctx
}

// do runs void steps and fails the test on error.
func do(t testing.TB, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

func text(t testing.TB, ctx context.Context, css string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(css)))
	if err != nil {
		t.Fatalf("%s: %v", css, err)
	}
	return v
}

func openPage(t testing.TB, ctx context.Context, url string) {
	t.Helper()
	do(t, ctx, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS(`body[data-ready="1"]`)))
}

func writePage(t *testing.T, fixture string, expand bool) string {
	t.Helper()
	opts := testOptions(FormatHTML)
	opts.Expand = expand
	page := draw(t, open(t, fixture), opts)
	path := filepath.Join(t.TempDir(), fixture+".html")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	return "file://" + path
}

// pwnedCheck is true when no payload ran: none set the global, changed the
// title or left a live element behind.
const pwnedCheck = `window.__pwned === undefined && document.title === "ctxfold graph" &&
	document.querySelectorAll("img, svg, iframe, a[href], #tree script, #details script").length === 0 &&
	document.scripts.length === 2`

func TestHTMLInBrowser(t *testing.T) {
	ctx := browser(t)
	g := open(t, "hostile")
	f := g.Fold()
	folded := 0
	for i := 0; i < g.Len(); i++ {
		if f.Folded(i) {
			folded++
		}
	}
	openPage(t, ctx, writePage(t, "hostile", false))
	ready := eval[bool](t, ctx, `document.body.dataset.ready === "1"`)
	capsules := eval[int](t, ctx, `document.querySelectorAll(".capsule").length`)
	visible := eval[int](t, ctx, `document.querySelectorAll(".covered:not([hidden]) .row").length`)
	occupancy := text(t, ctx, "#occ")
	do(t, ctx, chromedp.Click(chromedp.CSS(".capsule")))
	insideAfterClick := eval[int](t, ctx, `document.querySelectorAll(".covered:not([hidden]) .row").length`)
	hostileText := eval[string](t, ctx, `Array.from(document.querySelectorAll(".covered .row .id")).map(e => e.textContent).join("\n")`)
	// Click the node whose content is the <img onerror> payload.
	do(t, ctx, chromedp.Click(chromedp.CSS(".covered .row:nth-child(2)")))
	details := text(t, ctx, "#details")
	// Wait for the (debounced) search to show what it must find: every
	// drawn line whose node's id or content holds the word.
	wantHits := fmt.Sprintf("%d matches", linesMatching(t, g, "onerror"))
	do(t, ctx, chromedp.SendKeys(chromedp.CSS("#q"), "onerror"))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(`document.getElementById("qn").textContent === %q`, wantHits),
		chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("search for onerror: %q after waiting, want %q (%v)", text(t, ctx, "#qn"), wantHits, err)
	}
	hits := text(t, ctx, "#qn")
	clean := eval[bool](t, ctx, pwnedCheck)
	if !ready || capsules != 1 {
		t.Fatalf("ready %v, %d capsules (want 1)", ready, capsules)
	}
	if visible != 0 || insideAfterClick != folded {
		t.Errorf("covered nodes: %d visible before the click (want 0), %d after (want %d)", visible, insideAfterClick, folded)
	}
	if !strings.Contains(hostileText, hostileID) {
		t.Errorf("the hostile id is not shown as text:\n%s", hostileText)
	}
	if !strings.Contains(details, `"><img src=x onerror="window.__pwned='a1';document.title='pwned'">`) ||
		!strings.Contains(details, "assistant") || !strings.Contains(details, "tokens") {
		t.Errorf("details of a1 should show its content as text:\n%s", details)
	}
	if !strings.Contains(occupancy, "HEAD context:") || !strings.Contains(occupancy, "window") {
		t.Errorf("occupancy header: %q", occupancy)
	}
	if hits != wantHits || wantHits == "0 matches" {
		t.Errorf("search for onerror: %q, want %q (and more than none)", hits, wantHits)
	}
	if !clean {
		t.Errorf("a payload ran or left markup: __pwned=%s title=%q", eval[string](t, ctx, `String(window.__pwned)`),
			eval[string](t, ctx, `document.title`))
	}
}

// linesMatching is the number of lines of the HTML page (the layout with
// the capsule's folded nodes in it) whose node's id or full text holds
// word, case-insensitively: what the page's search must count.
func linesMatching(t *testing.T, g *dag.Graph, word string) int {
	t.Helper()
	l, err := newLayout(g, true, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = l.walk(func(ln line) error {
		node, err := g.S.Node(l.node(ln.item))
		if err != nil {
			return err
		}
		if strings.Contains(strings.ToLower(node.ID+"\n"+fullText(node)), word) {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The check above is only worth something if it notices a payload that
// does run: a page built with innerHTML must fail it.
func TestHTMLPwnedCheckDetectsInjection(t *testing.T) {
	ctx := browser(t)
	path := filepath.Join(t.TempDir(), "bad.html")
	bad := `<!doctype html><title>ctxfold graph</title><body><div id="tree"></div><script>
document.getElementById("tree").innerHTML = "<img src=x onerror=\"window.__pwned='x'\">";</script>`
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	// The image's error (and so the payload) fires after loading: wait for
	// the payload to have run rather than for a while.
	do(t, ctx, chromedp.Navigate("file://"+path))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`window.__pwned !== undefined`,
		chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("the injected payload never ran: %v", err)
	}
	if eval[bool](t, ctx, pwnedCheck) {
		t.Fatal("pwnedCheck passed a page whose payload ran")
	}
}

func TestHTMLExpandStartsOpen(t *testing.T) {
	ctx := browser(t)
	openPage(t, ctx, writePage(t, "compacted", true))
	visible := eval[int](t, ctx, `document.querySelectorAll(".covered:not([hidden]) .row").length`)
	heads := eval[int](t, ctx, `document.querySelectorAll(".row.head").length`)
	headText := text(t, ctx, ".row.head")
	if visible != 14 || heads != 1 || !strings.Contains(headText, "a8") {
		t.Errorf("expanded page: %d covered rows visible (want 14), %d HEAD rows %q", visible, heads, headText)
	}
}

// BenchmarkHTMLOpen measures a 10,000-node session's page from navigation
// to a built DOM in headless chromium (docs/BENCHMARKS.md).
func BenchmarkHTMLOpen(b *testing.B) {
	dir := bigSession(b, 10_000)
	g := openDir(b, dir)
	opts := testOptions(FormatHTML)
	var sb strings.Builder
	if err := Write(context.Background(), &sb, g, opts); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "big.html")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	ctx := browser(b)
	// Start the browser outside the timed loop.
	do(b, ctx, chromedp.Navigate("about:blank"))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		openPage(b, ctx, "file://"+path)
		if rows := eval[int](b, ctx, `document.querySelectorAll(".row").length`); rows < 10_000 {
			b.Fatalf("%d rows", rows)
		}
	}
	b.ReportMetric(float64(len(sb.String()))/1e6, "MB/page")
}

// bigSession writes an n-node session through the store: a long chain of
// user/assistant/tool turns with a retry fork every 50 nodes and a summary
// covering the first third.
func bigSession(tb testing.TB, n int) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "big")
	if _, err := store.Init(dir, "gpt-4o", store.WriteOptions{}); err != nil {
		tb.Fatal(err)
	}
	nodes := make([]transcript.Node, 0, n)
	prev := ""
	text := strings.Repeat("Lorem ipsum dolor sit amet, <consectetur> & adipiscing elit. ", 4)
	var chain []string
	for i := 0; len(nodes) < n-1; i++ {
		id := fmt.Sprintf("n%d", i)
		nd := transcript.Node{ID: id, Predecessor: prev, Content: transcript.TextContent(fmt.Sprintf("%d %s", i, text))}
		switch {
		case i == 0:
			nd.Role = transcript.RoleSystem
		case i%3 == 1:
			nd.Role = transcript.RoleUser
		case i%3 == 2:
			nd.Role = transcript.RoleAssistant
		default:
			nd.Role = transcript.RoleAssistant
		}
		nodes = append(nodes, nd)
		if i%50 == 10 && len(nodes) < n-1 {
			nodes = append(nodes, transcript.Node{ID: fmt.Sprintf("f%d", i), Predecessor: prev, Role: transcript.RoleAssistant,
				Content: transcript.TextContent("retry " + text)})
		}
		if i > 0 {
			chain = append(chain, id)
		}
		prev = id
	}
	covers := chain[:n/3]
	sum := transcript.Node{ID: "summary_big", Predecessor: "n0", Role: transcript.SummaryRole, Name: transcript.SummaryName,
		Content: transcript.TextContent(transcript.SummaryPrefix + "the first third, summarized")}
	sum.SetMeta("compaction", true)
	sum.SetMeta("covers_ids", covers)
	nodes = append(nodes, sum)
	if _, err := store.Update(context.Background(), dir, store.WriteOptions{}, func(tx *store.Tx) error {
		_, err := tx.Append(nodes, store.AppendOptions{RootFirst: true})
		return err
	}); err != nil {
		tb.Fatal(err)
	}
	return dir
}

func openDir(tb testing.TB, dir string) *dag.Graph {
	tb.Helper()
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { g.S.Close() })
	return g
}
