package dag_test

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/store"
)

// writeSession writes a hand-made session directory (bypassing the store's
// validation, so broken coverage can be tested too).
func writeSession(t testing.TB, head, active string, lines ...string) string {
	t.Helper()
	dir := t.TempDir()
	meta := map[string]any{"format_version": 1, "head": head}
	if active != "" {
		meta["active_summary_id"] = active
	}
	raw, _ := json.Marshal(meta)
	if err := os.WriteFile(filepath.Join(dir, store.MetaFile), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, store.NodesFile), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func node(id, pred, role string) string {
	p := "null"
	if pred != "" {
		p = fmt.Sprintf("%q", pred)
	}
	return fmt.Sprintf(`{"id":%q,"predecessor":%s,"role":%q,"content":"x"}`, id, p, role)
}

func spawned(id, pred, caller string) string {
	p := "null"
	if pred != "" {
		p = fmt.Sprintf("%q", pred)
	}
	return fmt.Sprintf(`{"id":%q,"predecessor":%s,"role":"assistant","caller":%q,"content":"x"}`, id, p, caller)
}

func summary(id, pred string, covers ...string) string {
	c, _ := json.Marshal(covers)
	return fmt.Sprintf(`{"id":%q,"predecessor":%q,"role":"user","name":"context/summary","content":"[Previous conversation summary]\nx","metadata":{"compaction":true,"covers_ids":%s}}`, id, pred, c)
}

func openGraph(t testing.TB, dir string) *dag.Graph {
	t.Helper()
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.S.Close() })
	return g
}

func ids(g *dag.Graph, pred func(i int) bool) []string {
	var out []string
	for i := 0; i < g.Len(); i++ {
		if pred(i) {
			out = append(out, g.ID(i))
		}
	}
	return out
}

// One fact, two projections: for every node, the fold's Carries is exactly
// whether rendering from that node substitutes the summary.
func assertMatchesSubstitute(t *testing.T, g *dag.Graph, f *dag.Fold) {
	t.Helper()
	for i := 0; i < g.Len(); i++ {
		if g.Ref(i).Summary {
			continue
		}
		want := g.Substitute(g.Spine(i)).Summary >= 0
		if got := f.Carries(i); got != want {
			t.Errorf("node %s: Carries = %v, Substitute says %v", g.ID(i), got, want)
		}
	}
}

// The other half of "one fact, two projections": what the fold hides or
// folds is never something a branch reads. For a tip that carries the
// summary, no folded id (covers_ids) is in its rendered view; for any tip
// outside the capsule, nothing in its view is hidden. (A tip inside a
// folded caller subtree is hidden itself, with its whole raw view.)
func assertFoldMatchesViews(t *testing.T, g *dag.Graph, f *dag.Fold) {
	t.Helper()
	for _, tip := range g.Tips() {
		view, _ := g.View(tip, false)
		for _, i := range view {
			if f.Hidden(i) && !f.Folded(tip) {
				t.Errorf("tip %s reads %s, but the fold hides it", g.ID(tip), g.ID(i))
			}
			if f.Carries(tip) && f.Folded(i) {
				t.Errorf("tip %s carries the summary and reads %s, but covers_ids folds it", g.ID(tip), g.ID(i))
			}
		}
	}
}

// A covered turn's callee that is also the first kept node (its
// predecessor is the last covered node) is read by the model: it must not
// fold, nor anything after it.
func TestFoldKeepsCalleeThatContinuesTheChain(t *testing.T) {
	g := openGraph(t, writeSession(t, "u3", "summary_s",
		node("r", "", "system"), node("u1", "r", "user"), node("a1", "u1", "assistant"),
		spawned("k1", "a1", "u1"), // spawned by covered u1, continuing after covered a1
		node("u3", "k1", "user"),
		summary("summary_s", "r", "u1", "a1"),
	))
	f := g.Fold()
	if !f.Applies {
		t.Fatal("the summary applies to the u3 branch")
	}
	assertMatchesSubstitute(t, g, f)
	assertFoldMatchesViews(t, g, f)
	if want := []string{"u1", "a1"}; !slices.Equal(f.CoversIDs, want) {
		t.Errorf("CoversIDs = %v, want %v (k1 and u3 are the kept tail)", f.CoversIDs, want)
	}
	head, _ := g.Lookup("u3")
	view, _ := g.View(head, false)
	for _, i := range view {
		if f.Folded(i) || f.Hidden(i) {
			t.Errorf("HEAD reads %s, yet the fold folds it", g.ID(i))
		}
	}
}

func TestFoldCompactedFixture(t *testing.T) {
	g := openGraph(t, "../fixtures/compacted")
	f := g.Fold()
	if f.Summary < 0 || g.ID(f.Summary) != "summary_second" || !f.Applies {
		t.Fatalf("fold: summary %d applies %v", f.Summary, f.Applies)
	}
	assertMatchesSubstitute(t, g, f)
	wantCovers := []string{"u1", "a1", "t1", "a2", "t2", "a3", "u2", "a4", "t3", "a5", "u3", "a6", "t4", "a7"}
	if !slices.Equal(f.CoversIDs, wantCovers) {
		t.Errorf("CoversIDs = %v", f.CoversIDs)
	}
	if got := ids(g, f.Carries); !slices.Equal(got, []string{"a7", "u4", "a8"}) {
		t.Errorf("carrying nodes = %v", got)
	}
	// u1..a3 stay visible raw on the u2x/a4x fork; u2..a7 vanish into the capsule.
	if got := ids(g, f.Hidden); !slices.Equal(got, []string{"u2", "a4", "t3", "a5", "u3", "a6", "t4", "a7"}) {
		t.Errorf("hidden = %v", got)
	}
	if g.ID(f.Last()) != "a7" {
		t.Errorf("Last = %s", g.ID(f.Last()))
	}
	// Relics never fold anything (docs/FORMAT.md §4: only the active summary is consulted).
	first, _ := g.Lookup("summary_first")
	if !g.IsRelic(first) || f.Folded(first) {
		t.Errorf("summary_first: relic %v folded %v", g.IsRelic(first), f.Folded(first))
	}
}

// The fold does not depend on HEAD: moving HEAD to the raw fork changes
// nothing the fold says.
func TestFoldIsHeadIndependent(t *testing.T) {
	lines := []string{
		node("r", "", "system"), node("u1", "r", "user"), node("a1", "u1", "assistant"),
		node("u2", "a1", "user"), node("a2", "u2", "assistant"), node("u3", "a2", "user"),
		node("x1", "a1", "user"), summary("summary_s", "r", "u1", "a1", "u2"),
	}
	var prev *dag.Fold
	var prevG *dag.Graph
	for _, head := range []string{"u3", "x1", "a1"} {
		g := openGraph(t, writeSession(t, head, "summary_s", lines...))
		f := g.Fold()
		assertMatchesSubstitute(t, g, f)
		if prev != nil {
			if !slices.Equal(f.CoversIDs, prev.CoversIDs) || !slices.Equal(ids(g, f.Carries), ids(prevG, prev.Carries)) ||
				!slices.Equal(ids(g, f.Hidden), ids(prevG, prev.Hidden)) {
				t.Errorf("head %s: fold differs", head)
			}
		}
		prev, prevG = f, g
	}
	if got := ids(prevG, prev.Hidden); !slices.Equal(got, []string{"u2"}) {
		t.Errorf("hidden = %v (u1, a1 stay raw on the x1 fork)", got)
	}
}

func TestFoldCallerSubtrees(t *testing.T) {
	g := openGraph(t, writeSession(t, "u2", "summary_s",
		node("r", "", "system"),
		node("u1", "r", "user"),
		node("a1", "u1", "assistant"),
		spawned("k1", "", "a1"),  // a sub-agent spawned by covered a1
		node("k2", "k1", "user"), // its chain continues
		spawned("k3", "", "k2"),  // and spawns again
		node("a2", "a1", "assistant"),
		node("u2", "a2", "user"),
		spawned("z1", "", "u2"), // spawned by a kept turn: not covered
		summary("summary_s", "r", "u1", "a1", "a2"),
	))
	f := g.Fold()
	assertMatchesSubstitute(t, g, f)
	if want := []string{"u1", "a1", "a2", "k1", "k2", "k3"}; !slices.Equal(f.CoversIDs, want) {
		t.Errorf("CoversIDs = %v, want %v", f.CoversIDs, want)
	}
	if got := ids(g, f.Hidden); !slices.Equal(got, []string{"u1", "a1", "k1", "k2", "k3", "a2"}) {
		t.Errorf("hidden = %v", got)
	}
	a1, _ := g.Lookup("a1")
	for _, id := range []string{"k1", "k2", "k3"} {
		k, _ := g.Lookup(id)
		if f.Turn(k) != a1 {
			t.Errorf("%s: turn %d, want a1", id, f.Turn(k))
		}
	}
	z1, _ := g.Lookup("z1")
	if f.Folded(z1) {
		t.Error("z1 was spawned by a kept turn; it must not fold")
	}
}

// A caller subtree is drawn raw wherever its covered turn is drawn raw.
func TestFoldCallerSubtreeOfRawVisibleTurn(t *testing.T) {
	g := openGraph(t, writeSession(t, "a2", "summary_s",
		node("r", "", "system"), node("u1", "r", "user"), node("a1", "u1", "assistant"),
		spawned("k1", "", "u1"), node("a2", "a1", "assistant"),
		node("x1", "u1", "assistant"), // fork from inside: u1 stays raw there
		summary("summary_s", "r", "u1", "a1"),
	))
	f := g.Fold()
	assertMatchesSubstitute(t, g, f)
	if got := ids(g, f.Hidden); !slices.Equal(got, []string{"a1"}) {
		t.Errorf("hidden = %v, want [a1] (u1 and its callee k1 stay raw on the x1 fork)", got)
	}
}

func TestFoldMissingIDs(t *testing.T) {
	// A hand-edited session: covers_ids names a node that no longer exists.
	g := openGraph(t, writeSession(t, "a2", "summary_s",
		node("r", "", "system"), node("u1", "r", "user"), node("a1", "u1", "assistant"),
		node("a2", "a1", "assistant"),
		summary("summary_s", "r", "u1", "gone", "a1"),
	))
	f := g.Fold()
	if f.Applies {
		t.Error("a summary with a missing covered id applies to no branch (render goes raw)")
	}
	assertMatchesSubstitute(t, g, f)
	if want := []string{"u1", "a1"}; !slices.Equal(f.CoversIDs, want) {
		t.Errorf("CoversIDs = %v, want %v (missing ids dropped)", f.CoversIDs, want)
	}
	if got := ids(g, f.Hidden); len(got) != 0 {
		t.Errorf("hidden = %v; nothing hides when no branch carries the summary", got)
	}
}

func TestFoldWrongSplicePoint(t *testing.T) {
	g := openGraph(t, writeSession(t, "a2", "summary_s",
		node("r", "", "system"), node("u1", "r", "user"), node("a1", "u1", "assistant"),
		node("a2", "a1", "assistant"),
		summary("summary_s", "u1", "a1"), // splice point right
		summary("summary_t", "r", "a1"),  // splice point wrong: active
	))
	g2 := openGraph(t, writeSession(t, "a2", "summary_t",
		node("r", "", "system"), node("u1", "r", "user"), node("a1", "u1", "assistant"),
		node("a2", "a1", "assistant"),
		summary("summary_s", "u1", "a1"),
		summary("summary_t", "r", "a1"),
	))
	if f := g.Fold(); !f.Applies {
		t.Error("summary_s splices at a1's predecessor: it applies")
	} else {
		assertMatchesSubstitute(t, g, f)
	}
	if f := g2.Fold(); f.Applies {
		t.Error("summary_t's predecessor is not the splice point: it applies nowhere")
	} else {
		assertMatchesSubstitute(t, g2, f)
	}
}

func TestFoldNoSummary(t *testing.T) {
	g := openGraph(t, "../fixtures/fork")
	f := g.Fold()
	if f.Summary != -1 || f.Applies || f.CoversIDs != nil || f.Last() != -1 {
		t.Errorf("fold of a session without summary: %+v", f)
	}
	for i := 0; i < g.Len(); i++ {
		if f.Carries(i) || f.Hidden(i) || f.Folded(i) {
			t.Errorf("node %s folds without a summary", g.ID(i))
		}
	}
}

// Random trees with a random valid summary: the fold agrees with
// Substitute on every node.
func TestFoldMatchesSubstituteRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	applied := 0
	for trial := 0; trial < 60; trial++ {
		n := 5 + rng.Intn(40)
		lines := []string{node("n0", "", "system")}
		preds := []int{-1}
		for i := 1; i < n; i++ {
			p := i - 1
			if rng.Intn(4) == 0 {
				p = rng.Intn(i)
			}
			preds = append(preds, p)
			if rng.Intn(6) == 0 {
				lines = append(lines, spawned(fmt.Sprintf("n%d", i), fmt.Sprintf("n%d", p), fmt.Sprintf("n%d", rng.Intn(i))))
				continue
			}
			lines = append(lines, node(fmt.Sprintf("n%d", i), fmt.Sprintf("n%d", p), "user"))
		}
		// Cover a chain segment ending at a random node.
		end := 1 + rng.Intn(n-1)
		var chain []string
		for c := end; c > 0 && len(chain) < 1+rng.Intn(5); c = preds[c] {
			chain = append([]string{fmt.Sprintf("n%d", c)}, chain...)
		}
		first, _ := strconvAtoi(chain[0][1:])
		splice := fmt.Sprintf("n%d", max(preds[first], 0))
		if rng.Intn(5) == 0 && len(chain) > 1 {
			chain = append(chain[:1], chain[2:]...) // not contiguous: applies nowhere
		}
		if rng.Intn(2) == 0 {
			// A covered turn's callee that also continues the chain after
			// the segment (append --caller allows it): the first kept node.
			caller := chain[rng.Intn(len(chain))]
			lines = append(lines, spawned("k0", fmt.Sprintf("n%d", end), caller), node("k1", "k0", "user"))
		}
		lines = append(lines, summary("summary_r", splice, chain...))
		g := openGraph(t, writeSession(t, fmt.Sprintf("n%d", n-1), "summary_r", lines...))
		f := g.Fold()
		if f.Applies {
			applied++
		}
		assertMatchesSubstitute(t, g, f)
		assertFoldMatchesViews(t, g, f)
		// Only folded nodes hide, and only when some branch carries the
		// summary.
		for i := 0; i < g.Len(); i++ {
			if f.Hidden(i) && (!f.Folded(i) || !f.Applies) {
				t.Fatalf("trial %d: node %s hidden but folded=%v applies=%v", trial, g.ID(i), f.Folded(i), f.Applies)
			}
		}
	}
	if applied < 10 || applied > 55 {
		t.Errorf("the summary applied in %d of 60 trials; the generator no longer covers both cases", applied)
	}
}

func strconvAtoi(s string) (int, error) {
	var n int
	_, err := fmt.Sscanf(s, "%d", &n)
	return n, err
}

func ExampleGraph_Fold() {
	g, err := dag.Open("../fixtures/compacted", store.OpenOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.S.Close()
	f := g.Fold()
	fmt.Println("capsule:", g.ID(f.Summary), "covers", len(f.CoversIDs), "nodes")
	for _, tip := range g.Tips() {
		fmt.Printf("branch %s carries it: %v\n", g.ID(tip), f.Carries(tip))
	}
	// Output:
	// capsule: summary_second covers 14 nodes
	// branch a8 carries it: true
	// branch a4x carries it: false
}
