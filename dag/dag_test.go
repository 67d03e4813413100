package dag_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// dgOpen opens a session directory's graph, failing on any fault.
func dgOpen(t testing.TB, dir string) *dag.Graph {
	t.Helper()
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.S.Close() })
	return g
}

func dgIDs(g *dag.Graph, idx []int) []string {
	out := make([]string, len(idx))
	for k, i := range idx {
		out[k] = g.ID(i)
	}
	return out
}

func dgView(t testing.TB, g *dag.Graph, head string, raw bool) []string {
	t.Helper()
	h, ok := g.Lookup(head)
	if !ok {
		t.Fatalf("no node %s", head)
	}
	v, _ := g.View(h, raw)
	return dgIDs(g, v)
}

// dgWrite writes a hand-made session (lines are raw JSON nodes), bypassing
// the store's validation so the graph sees exactly what is on disk.
func dgWrite(t testing.TB, head, active string, lines ...string) string {
	t.Helper()
	dir := t.TempDir()
	meta := fmt.Sprintf(`{"format_version":1,"head":%q,"active_summary_id":%q}`, head, active)
	if err := os.WriteFile(filepath.Join(dir, store.MetaFile), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, store.NodesFile), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func dgNode(id, pred string) string {
	p := "null"
	if pred != "" {
		p = fmt.Sprintf("%q", pred)
	}
	return fmt.Sprintf(`{"id":%q,"predecessor":%s,"role":"user","content":"x"}`, id, p)
}

func dgSummary(id, pred string, covers ...string) string {
	p := "null"
	if pred != "" {
		p = fmt.Sprintf("%q", pred)
	}
	q := make([]string, len(covers))
	for i, c := range covers {
		q[i] = fmt.Sprintf("%q", c)
	}
	return fmt.Sprintf(`{"id":%q,"predecessor":%s,"role":"user","name":"context/summary","content":"[Previous conversation summary]\nS","metadata":{"compaction":true,"covers_ids":[%s]}}`,
		id, p, strings.Join(q, ","))
}

const compacted = "../fixtures/compacted"

// docs/FORMAT.md §4 (substitution): after compaction the active branch renders
// [ROOT, S, kept tail…], covered ids absent, S present.
func TestActiveBranchRendersSummary(t *testing.T) {
	g := dgOpen(t, compacted)
	got := dgView(t, g, "a8", false)
	if want := []string{"sys", "summary_second", "u4", "a8"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("view = %v, want %v", got, want)
	}
	s, _ := g.Lookup("summary_second")
	covered, ok := g.Covered(s)
	if !ok || len(covered) != 14 {
		t.Fatalf("covered = %v %v", covered, ok)
	}
	for _, id := range dgIDs(g, covered) {
		for _, v := range got {
			if v == id {
				t.Fatalf("covered id %s rendered", id)
			}
		}
	}
	h, _ := g.Lookup("a8")
	sub := g.Substitute(g.Spine(h))
	if sub.Summary != s || sub.At != 1 || sub.Len != 14 {
		t.Fatalf("substitution = %+v", sub)
	}
	// A head inside the kept tail, and the last covered node itself, carry
	// the summary too (their spines hold the whole segment).
	if got := dgView(t, g, "u4", false); !reflect.DeepEqual(got, []string{"sys", "summary_second", "u4"}) {
		t.Fatalf("from u4: %v", got)
	}
	if got := dgView(t, g, "a7", false); !reflect.DeepEqual(got, []string{"sys", "summary_second"}) {
		t.Fatalf("from a7: %v", got)
	}
}

// docs/FORMAT.md §4 (substitution): a fork from inside the covered range renders raw — and
// the relic summary_first, whose coverage does lie on that fork's spine,
// never substitutes (docs/FORMAT.md §4).
func TestForkInsideCoveredRangeRendersRaw(t *testing.T) {
	g := dgOpen(t, compacted)
	got := dgView(t, g, "a4x", false)
	want := []string{"sys", "u1", "a1", "t1", "a2", "t2", "a3", "u2x", "a4x"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fork view = %v, want %v", got, want)
	}
	first, _ := g.Lookup("summary_first")
	if !g.IsRelic(first) {
		t.Fatal("summary_first is not a relic")
	}
	// Its segment is on the fork's spine: only the active-summary rule
	// keeps it out.
	covered, _ := g.Covered(first)
	h, _ := g.Lookup("a4x")
	if _, on := g.SegmentOnSpine(g.Spine(h), covered, g.Pred(first)); !on {
		t.Fatal("test premise: summary_first's segment should lie on a4x's spine")
	}
	if sub := g.Substitute(g.Spine(h)); sub.Summary != -1 {
		t.Fatalf("a relic substituted: %+v", sub)
	}
}

// --raw gives back the original ids: the spine.
func TestRawIsTheSpine(t *testing.T) {
	g := dgOpen(t, compacted)
	got := dgView(t, g, "a8", true)
	h, _ := g.Lookup("a8")
	if !reflect.DeepEqual(got, dgIDs(g, g.Spine(h))) || len(got) != 17 || got[0] != "sys" || got[16] != "a8" {
		t.Fatalf("raw view = %v", got)
	}
	for _, id := range got {
		if strings.HasPrefix(id, transcript.SummaryIDPrefix) {
			t.Fatalf("raw view holds %s", id)
		}
	}
}

// docs/FORMAT.md §4: rendering depends on data only. Moving HEAD anywhere changes no
// node's rendering.
func TestRenderingIsHeadIndependent(t *testing.T) {
	g := dgOpen(t, compacted)
	baseline := map[string][]string{}
	for i := range g.Len() {
		if !g.Ref(i).Summary {
			baseline[g.ID(i)] = dgView(t, g, g.ID(i), false)
		}
	}
	src, _ := os.ReadFile(filepath.Join(compacted, store.MetaFile))
	nodes, _ := os.ReadFile(filepath.Join(compacted, store.NodesFile))
	for head := range baseline {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, store.NodesFile), nodes, 0o644)
		meta := strings.Replace(string(src), `"head": "a8"`, fmt.Sprintf(`"head": %q`, head), 1)
		os.WriteFile(filepath.Join(dir, store.MetaFile), []byte(meta), 0o644)
		g2 := dgOpen(t, dir)
		if g2.ID(g2.Head()) != head {
			t.Fatalf("HEAD not moved to %s", head)
		}
		for from, want := range baseline {
			if got := dgView(t, g2, from, false); !reflect.DeepEqual(got, want) {
				t.Fatalf("with HEAD at %s, %s renders %v, want %v", head, from, got, want)
			}
		}
	}
}

func TestSpineChildrenTips(t *testing.T) {
	g := dgOpen(t, "../fixtures/fork")
	h, _ := g.Lookup("a2b")
	if got := dgIDs(g, g.Spine(h)); !reflect.DeepEqual(got, []string{"sys", "u1", "a1b", "u2b", "a2b"}) {
		t.Fatalf("spine = %v", got)
	}
	if g.Depth(h) != 4 || g.ID(g.Head()) != "a2b" || g.ActiveSummary() != -1 {
		t.Fatalf("depth %d head %d active %d", g.Depth(h), g.Head(), g.ActiveSummary())
	}
	u1, _ := g.Lookup("u1")
	var kids []string
	for _, c := range g.Children(u1) {
		kids = append(kids, g.ID(int(c)))
	}
	if !reflect.DeepEqual(kids, []string{"a1", "a1b"}) {
		t.Fatalf("children of u1 = %v", kids)
	}
	if got := dgIDs(g, g.Tips()); !reflect.DeepEqual(got, []string{"a2", "a2b"}) {
		t.Fatalf("tips = %v", got)
	}
	// Summaries are not tips, and a summary child does not hide a tip.
	c := dgOpen(t, compacted)
	if got := dgIDs(c, c.Tips()); !reflect.DeepEqual(got, []string{"a8", "a4x"}) {
		t.Fatalf("compacted tips = %v", got)
	}
}

// The substitution rule's edges, on hand-written sessions the store would
// refuse.
func TestSubstituteRequiresWholeContiguousSegmentAndSplicePoint(t *testing.T) {
	chain := []string{dgNode("r", ""), dgNode("a", "r"), dgNode("b", "a"), dgNode("c", "b"), dgNode("d", "c")}
	for _, tc := range []struct {
		name    string
		summary string
		want    []string
	}{
		{"substitutes", dgSummary("summary_s", "r", "a", "b"), []string{"r", "summary_s", "c", "d"}},
		{"root segment", dgSummary("summary_s", "", "r", "a"), []string{"summary_s", "b", "c", "d"}},
		{"whole spine", dgSummary("summary_s", "", "r", "a", "b", "c", "d"), []string{"summary_s"}},
		{"wrong splice point", dgSummary("summary_s", "a", "a", "b"), []string{"r", "a", "b", "c", "d"}},
		{"gap in segment", dgSummary("summary_s", "r", "a", "c"), []string{"r", "a", "b", "c", "d"}},
		{"out of order", dgSummary("summary_s", "r", "b", "a"), []string{"r", "a", "b", "c", "d"}},
		{"covers a missing id", dgSummary("summary_s", "r", "a", "zz"), []string{"r", "a", "b", "c", "d"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := dgOpen(t, dgWrite(t, "d", "summary_s", append(chain, tc.summary)...))
			if got := dgView(t, g, "d", false); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("view = %v, want %v", got, tc.want)
			}
			if got := dgView(t, g, "d", true); !reflect.DeepEqual(got, []string{"r", "a", "b", "c", "d"}) {
				t.Fatalf("raw view = %v", got)
			}
		})
	}
	// Without an active summary nothing substitutes, even a valid summary.
	g := dgOpen(t, dgWrite(t, "d", "", append(chain, dgSummary("summary_s", "r", "a", "b"))...))
	if got := dgView(t, g, "d", false); len(got) != 5 {
		t.Fatalf("inactive summary substituted: %v", got)
	}
}

// New reports every integrity fault with its code, file and line.
func TestIntegrityErrors(t *testing.T) {
	dir := dgWrite(t, "ghost", "u1",
		dgNode("r", ""),
		dgNode("u1", "r"),
		dgNode("u1", "r"),
		dgNode("x", "missing"),
		dgNode("c1", "c2"),
		dgNode("c2", "c1"),
		`{"id":"k","predecessor":"r","role":"user","caller":"nobody"}`,
	)
	s, err := store.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, errs := dag.New(s)
	var got []string
	for _, e := range errs {
		got = append(got, fmt.Sprintf("%s %d %s", e.Code, e.Line, e.NodeID))
		if !strings.HasPrefix(e.Error(), dir) || strings.Contains(e.Error(), "\n") {
			t.Errorf("error %q", e.Error())
		}
	}
	want := []string{
		"duplicate_id 3 u1",
		"missing_predecessor 4 x",
		"missing_caller 7 k",
		"cycle 5 c1",
		"head_missing 1 ghost",
		"active_summary_not_summary 2 u1",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("faults:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := dag.Load(s); err == nil || !strings.Contains(err.Error(), `nodes.jsonl:3: node "u1": duplicate id (first defined on line 2)`) {
		t.Fatalf("Load: %v", err)
	}
	// Nodes off a broken chain have no depth and no spine.
	g, _ := dag.New(s)
	x, _ := g.Lookup("x")
	c1, _ := g.Lookup("c1")
	if g.Depth(x) != -1 || g.Spine(x) != nil || g.Depth(c1) != -1 {
		t.Fatalf("broken chains: depth(x)=%d depth(c1)=%d", g.Depth(x), g.Depth(c1))
	}
}

// A long chain: depths, spine and substitution are computed without
// recursion (no stack growth with chain length). Speed is measured by
// BenchmarkViewLongChain, not here.
func TestLongChain(t *testing.T) {
	const n = 20_000
	var b strings.Builder
	b.WriteString(dgNode("n0", "") + "\n")
	for i := 1; i < n; i++ {
		b.WriteString(dgNode(fmt.Sprintf("n%d", i), fmt.Sprintf("n%d", i-1)) + "\n")
	}
	covers := make([]string, 0, 1000)
	for i := 1; i <= 1000; i++ {
		covers = append(covers, fmt.Sprintf("n%d", i))
	}
	b.WriteString(dgSummary("summary_s", "n0", covers...) + "\n")
	dir := dgWrite(t, fmt.Sprintf("n%d", n-1), "summary_s")
	os.WriteFile(filepath.Join(dir, store.NodesFile), []byte(b.String()), 0o644)
	g := dgOpen(t, dir)
	v, sub := g.View(g.Head(), false)
	if len(v) != n-1000+1 || sub.At != 1 || g.ID(v[1]) != "summary_s" {
		t.Fatalf("view of %d nodes, substitution %+v", len(v), sub)
	}
}

func BenchmarkViewLongChain(b *testing.B) {
	const n = 100_000
	var sb strings.Builder
	sb.WriteString(dgNode("n0", "") + "\n")
	for i := 1; i < n; i++ {
		sb.WriteString(dgNode(fmt.Sprintf("n%d", i), fmt.Sprintf("n%d", i-1)) + "\n")
	}
	sb.WriteString(dgSummary("summary_s", "n0", "n1", "n2", "n3") + "\n")
	dir := dgWrite(b, fmt.Sprintf("n%d", n-1), "summary_s")
	os.WriteFile(filepath.Join(dir, store.NodesFile), []byte(sb.String()), 0o644)
	g := dgOpen(b, dir)
	h := g.Head()
	for b.Loop() {
		g.View(h, false)
	}
}

// ExampleGraph_View renders the compacted fixture from HEAD and from a
// fork inside the covered range.
func ExampleGraph_View() {
	g, err := dag.Open("../fixtures/compacted", store.OpenOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.S.Close()
	show := func(head int) {
		view, sub := g.View(head, false)
		var ids []string
		for _, i := range view {
			ids = append(ids, g.ID(i))
		}
		fmt.Println(strings.Join(ids, " "), "| summarized:", sub.Summary >= 0)
	}
	show(g.Head())
	fork, _ := g.Lookup("a4x")
	show(fork)
	// Output:
	// sys summary_second u4 a8 | summarized: true
	// sys u1 a1 t1 a2 t2 a3 u2x a4x | summarized: false
}
