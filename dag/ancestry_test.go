package dag_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/store"
)

// naiveIsAncestor walks b's predecessor chain; ok is false when the chain
// never ends (b is on or below a cycle).
func naiveIsAncestor(g *dag.Graph, a, b int) (found, ok bool) {
	for x, steps := b, 0; steps <= g.Len(); x, steps = g.Pred(x), steps+1 {
		if x < 0 {
			return found, true
		}
		found = found || x == a
	}
	return false, false
}

// Random forests, some with a missing predecessor or a cycle (built with
// dag.New, which keeps going past integrity faults): IsAncestor agrees
// with walking the chain for every pair.
func TestIsAncestorRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for trial := 0; trial < 40; trial++ {
		n := 2 + rng.Intn(50)
		preds := make([]string, n)
		lines := make([]string, n)
		for i := 0; i < n; i++ {
			switch {
			case i > 0 && rng.Intn(8) > 0:
				preds[i] = fmt.Sprintf("n%d", rng.Intn(i))
			case i > 0 && rng.Intn(2) == 0:
				preds[i] = "gone" // a missing predecessor: a broken root
			}
		}
		if trial%4 == 0 && n > 3 {
			preds[1] = fmt.Sprintf("n%d", n-1) // may close a cycle
		}
		for i := range lines {
			lines[i] = node(fmt.Sprintf("n%d", i), preds[i], "user")
		}
		s, err := store.Open(writeSession(t, "n0", "", lines...), store.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		g, _ := dag.New(s)
		for a := 0; a < n; a++ {
			for b := 0; b < n; b++ {
				got := g.IsAncestor(a, b)
				want, ok := naiveIsAncestor(g, a, b)
				if !ok {
					want = a == b // a node on or below a cycle has no spine
				}
				if got != want {
					t.Fatalf("trial %d: IsAncestor(n%d, n%d) = %v, want %v", trial, a, b, got, want)
				}
			}
		}
		s.Close()
	}
}

// One long chain (the numbering walks it without recursion): exact at
// both ends and in the middle.
func TestIsAncestorDeepChain(t *testing.T) {
	const n = 100_000
	lines := make([]string, n)
	lines[0] = node("n0", "", "system")
	for i := 1; i < n; i++ {
		lines[i] = node(fmt.Sprintf("n%d", i), fmt.Sprintf("n%d", i-1), "user")
	}
	g := openGraph(t, writeSession(t, fmt.Sprintf("n%d", n-1), "", lines...))
	if !g.IsAncestor(0, n-1) || !g.IsAncestor(n/2, n/2+1) || g.IsAncestor(n-1, 0) || g.IsAncestor(n/2+1, n/2) {
		t.Error("ancestry on one long chain is wrong")
	}
}

func ExampleGraph_IsAncestor() {
	g, err := dag.Open("../fixtures/compacted", store.OpenOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.S.Close()
	a3, _ := g.Lookup("a3")
	u2x, _ := g.Lookup("u2x")
	a8, _ := g.Lookup("a8")
	fmt.Println("a3 is on u2x's spine:", g.IsAncestor(a3, u2x))
	fmt.Println("u2x is on a8's spine:", g.IsAncestor(u2x, a8))
	// Output:
	// a3 is on u2x's spine: true
	// u2x is on a8's spine: false
}
