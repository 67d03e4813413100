package verify_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/compact"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
	"github.com/ctxfold/ctxfold/verify"
)

// TestToolModelAgrees: every caller of the tool-call model (docs/FORMAT.md
// §2, tool-call adjacency) agrees on generated sessions, some of them
// damaged: the store accepts a session exactly when verify finds no tool
// error in it; the open calls the store computes walking up from a node
// are those the forward grouping (transcript.ToolGroups, used by fit) has
// open there; and compaction never cuts inside a tool group.
func TestToolModelAgrees(t *testing.T) {
	var accepted, rejected, textBeside int
	for s := range 300 {
		r := rand.New(rand.NewPCG(uint64(s), 17))
		nodes, mixed := damage(r, sessiontest.Generate(r, 1+r.IntN(6)))
		ok := storeAccepts(t, nodes)
		toolErrs := verifyToolErrors(t, nodes)
		if ok != (len(toolErrs) == 0) {
			t.Fatalf("session %d: the store accepts it: %v; verify's tool errors: %v\n%s", s, ok, toolErrs, dumpNodes(nodes))
		}
		ptrs := sessiontest.Pointers(nodes)
		checkOpenAgrees(t, s, ptrs)
		if !ok {
			rejected++
			continue
		}
		accepted++
		if mixed {
			textBeside++
		}
		checkCutsOutsideGroups(t, s, r, ptrs)
	}
	// The generator must exercise both outcomes and the case the model
	// settles: results with text or an image beside them.
	t.Logf("accepted %d, rejected %d, with content beside results %d", accepted, rejected, textBeside)
	if accepted < 50 || rejected < 50 || textBeside < 10 {
		t.Fatalf("accepted %d, rejected %d, accepted with content beside results %d: the generator is too tame", accepted, rejected, textBeside)
	}
}

// damage applies zero to two random faults or odd-but-valid shapes to a
// generated session and links the nodes into one chain again. mixed is
// true when a node carries text or an image beside its results.
func damage(r *rand.Rand, nodes []transcript.Node) (out []transcript.Node, mixed bool) {
	out = nodes
	next := 0
	fresh := func() string { next++; return fmt.Sprintf("x%d", next) }
	for range r.IntN(3) {
		var withResults, withCalls []int
		for i := range out {
			if len(out[i].ToolResults()) > 0 {
				withResults = append(withResults, i)
			}
			if len(out[i].AllToolCalls()) > 0 {
				withCalls = append(withCalls, i)
			}
		}
		switch k := r.IntN(5); {
		case k == 0 && len(withResults) > 0: // a lost result
			i := withResults[r.IntN(len(withResults))]
			out = slices.Delete(slices.Clone(out), i, i+1)
		case k == 1 && len(withCalls) > 0: // a user message between a call and its results
			i := withCalls[r.IntN(len(withCalls))]
			u := transcript.Node{ID: fresh(), Role: transcript.RoleUser, Content: transcript.TextContent("are you there?")}
			out = slices.Insert(slices.Clone(out), i+1, u)
		case k == 2 && len(withResults) > 0: // a result given twice
			i := withResults[r.IntN(len(withResults))]
			d := out[i]
			d.ID = fresh()
			out = slices.Insert(slices.Clone(out), i+1, d)
		case len(withResults) > 0: // content beside a result (valid)
			out = slices.Clone(out)
			i := withResults[r.IntN(len(withResults))]
			n := &out[i]
			if n.Role == transcript.RoleTool {
				n.Role = transcript.RoleUser
				n.Content = transcript.Content{IsBlocks: true, Blocks: []transcript.Block{{Type: transcript.BlockToolResult, ToolCallID: n.ToolCallID, Text: n.Content.PlainText()}}}
				n.ToolCallID = ""
			} else {
				n.Content.Blocks = slices.Clone(n.Content.Blocks)
			}
			extra := transcript.Block{Type: transcript.BlockText, Text: "and a remark"}
			if r.IntN(2) == 0 {
				extra = transcript.Block{Type: transcript.BlockImage, Extra: map[string]json.RawMessage{"digest": json.RawMessage(`"sha256:00"`)}}
			}
			n.Content.Blocks = append(n.Content.Blocks, extra)
		}
	}
	for i := range out {
		out[i].Predecessor = ""
		if i > 0 {
			out[i].Predecessor = out[i-1].ID
		}
		if len(out[i].ToolResults()) > 0 && out[i].HasText() {
			mixed = true
		}
	}
	return out, mixed
}

// storeAccepts appends the whole chain in one batch to a new session.
func storeAccepts(t *testing.T, nodes []transcript.Node) bool {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "s")
	if _, err := store.Init(dir, "", store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := store.Update(context.Background(), dir, store.WriteOptions{}, func(tx *store.Tx) error {
		_, err := tx.Append(slices.Clone(nodes), store.AppendOptions{RootFirst: true})
		return err
	})
	var invalid *store.ValidationError
	if err != nil && !errors.As(err, &invalid) {
		t.Fatal(err)
	}
	return err == nil
}

// verifyToolErrors writes the chain as it is, without the store's checks,
// and returns verify's tool errors.
func verifyToolErrors(t *testing.T, nodes []transcript.Node) []string {
	t.Helper()
	dir := t.TempDir()
	var lines []string
	for _, n := range nodes {
		b, err := n.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	head := nodes[len(nodes)-1].ID
	os.WriteFile(filepath.Join(dir, "nodes.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "session.json"), []byte(fmt.Sprintf(`{"format_version":1,"head":%q}`, head)), 0o644)
	_, fs := check(t, dir, verify.Options{})
	var out []string
	for _, f := range fs {
		if f.Category == verify.Tools && f.Severity == verify.Error {
			out = append(out, f.Code+" "+f.NodeID)
		}
	}
	return out
}

// checkOpenAgrees compares, at every node, the calls transcript.CallsBefore
// leaves open walking up (the store, the Claude Code importer, verify's
// summary checks) with those the forward groups leave open there.
func checkOpenAgrees(t *testing.T, s int, nodes []*transcript.Node) {
	t.Helper()
	at := map[string]int{}
	for i, n := range nodes {
		at[n.ID] = i
	}
	forward := make([][]string, len(nodes))
	for _, g := range transcript.ToolGroups(nodes) {
		open := nodes[g.Call].ToolFacts().Calls
		for j := g.Call; j <= g.Last(); j++ {
			if j > g.Call {
				open = slices.DeleteFunc(slices.Clone(open), func(c string) bool { return slices.Contains(nodes[j].ToolFacts().Results, c) })
			}
			forward[j] = open
		}
	}
	for i, n := range nodes {
		_, calls, answered, err := transcript.CallsBefore(n.ID, func(id string) (transcript.ToolFacts, string, bool) {
			k, ok := at[id]
			if !ok {
				return transcript.ToolFacts{}, "", false
			}
			return nodes[k].ToolFacts(), nodes[k].Predecessor, true
		}, len(nodes))
		if err != nil {
			t.Fatal(err)
		}
		// Results answering no open call do not count in either view.
		back := transcript.OpenCalls(calls, answered)
		if !slices.Equal(back, forward[i]) && len(back)+len(forward[i]) > 0 {
			t.Fatalf("session %d: after %q the walk up leaves %v open, the groups %v\n%s", s, n.ID, back, forward[i], dumpNodes(derefAll(nodes)))
		}
	}
}

// checkCutsOutsideGroups: compact's plan cuts at a turn start outside every
// tool group, so the covered part and the kept tail each hold whole groups.
func checkCutsOutsideGroups(t *testing.T, s int, r *rand.Rand, nodes []*transcript.Node) {
	t.Helper()
	toks := make([]int, len(nodes))
	total := 0
	for i := range toks {
		toks[i] = 1 + r.IntN(300)
		total += toks[i]
	}
	groups := transcript.ToolGroups(nodes)
	for _, keep := range []int{0, total / 4, total / 2, total - 1} {
		p := compact.MakePlan(compact.PlanInput{Nodes: nodes, Tokens: toks, Total: total, Target: keep})
		if p.NoOp {
			continue
		}
		// A turn start, or inside a long latest turn a response right
		// after tool results (docs/COMPACT.md §2).
		step := p.WithinTurn && nodes[p.Cut].Role == transcript.RoleAssistant && len(nodes[p.Cut-1].ToolResults()) > 0
		if !nodes[p.Cut].IsTurnStart() && !step {
			t.Fatalf("session %d keep %d: cut at %q, not a turn start nor a step", s, keep, nodes[p.Cut].ID)
		}
		for _, g := range groups {
			if g.Call < p.Cut && p.Cut <= g.Last() {
				t.Fatalf("session %d keep %d: cut at %q inside the group of %q", s, keep, nodes[p.Cut].ID, nodes[g.Call].ID)
			}
		}
	}
}

func derefAll(ptrs []*transcript.Node) []transcript.Node {
	out := make([]transcript.Node, len(ptrs))
	for i, p := range ptrs {
		out[i] = *p
	}
	return out
}

func dumpNodes(nodes []transcript.Node) string {
	var b strings.Builder
	for _, n := range nodes {
		f := n.ToolFacts()
		fmt.Fprintf(&b, "  %s %s calls=%v results=%v text=%v\n", n.ID, n.Role, f.Calls, f.Results, n.HasText())
	}
	return b.String()
}
