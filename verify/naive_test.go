package verify

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// randomSession writes a random branching session with tool calls (some
// results missing, some orphaned) and an active summary over a random
// contiguous segment (sometimes at a wrong splice point).
func randomSession(t *testing.T, seed uint64, n int) string {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	dir := t.TempDir()
	var lines []string
	preds := []string{"sys"}
	pred := map[string]string{}
	lines = append(lines, `{"id":"sys","predecessor":null,"role":"system","content":"s"}`)
	var calls []string
	for i := 1; i < n; i++ {
		id := fmt.Sprintf("n%d", i)
		p := preds[len(preds)-1]
		if r.IntN(6) == 0 {
			p = preds[r.IntN(len(preds))]
		}
		pred[id] = p
		switch k := r.IntN(10); {
		case k < 3:
			lines = append(lines, fmt.Sprintf(`{"id":%q,"predecessor":%q,"role":"user","content":"u"}`, id, p))
		case k < 5:
			lines = append(lines, fmt.Sprintf(`{"id":%q,"predecessor":%q,"role":"assistant","content":"a"}`, id, p))
		case k < 7:
			c1, c2 := "c"+id+"a", "c"+id+"b"
			calls = append(calls, c1, c2)
			lines = append(lines, fmt.Sprintf(`{"id":%q,"predecessor":%q,"role":"assistant","content":"","tool_calls":[{"id":%q,"name":"f"},{"id":%q,"name":"f"}]}`, id, p, c1, c2))
		default:
			call := "nowhere"
			if len(calls) > 0 {
				call = calls[len(calls)-1-r.IntN(min(len(calls), 3))]
			}
			lines = append(lines, fmt.Sprintf(`{"id":%q,"predecessor":%q,"role":"tool","tool_call_id":%q,"content":"r"}`, id, p, call))
		}
		preds = append(preds, id)
	}
	// A segment: walk up from a random node, drop the root.
	var chain []string
	for x := preds[1+r.IntN(len(preds)-1)]; x != "sys"; x = pred[x] {
		chain = append(chain, x)
	}
	slices.Reverse(chain)
	from := r.IntN(len(chain))
	to := from + 1 + r.IntN(len(chain)-from)
	seg := chain[from:to]
	splice := "sys"
	if from > 0 {
		splice = chain[from-1]
	}
	if r.IntN(4) == 0 {
		splice = "sys"
	}
	quoted := make([]string, len(seg))
	for k, id := range seg {
		quoted[k] = fmt.Sprintf("%q", id)
	}
	lines = append(lines, fmt.Sprintf(`{"id":"summary_r","predecessor":%q,"role":"user","name":"context/summary","content":"[Previous conversation summary]\nx","metadata":{"compaction":true,"covers_ids":[%s]}}`, splice, strings.Join(quoted, ",")))
	head := preds[r.IntN(len(preds))]
	os.WriteFile(filepath.Join(dir, "nodes.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "session.json"), []byte(fmt.Sprintf(`{"format_version":1,"head":%q,"active_summary_id":"summary_r","active_summary_text":"x"}`, head)), 0o644)
	return dir
}

// naiveTools renders every branch tip with render.Build and walks each
// view, returning "code node call" keys of the adjacency violations.
func naiveTools(t *testing.T, g *dag.Graph) (map[string]bool, map[int]bool) {
	found, visible := map[string]bool{}, map[int]bool{}
	for _, tip := range g.Tips() {
		v, err := render.Build(g, g.ID(tip), false)
		if err != nil {
			t.Fatal(err)
		}
		type open struct {
			call string
			node int
		}
		var pending []open
		for _, x := range v.Indexes {
			visible[x] = true
			ref := g.Ref(x)
			for _, res := range ref.ResultIDs {
				k := slices.IndexFunc(pending, func(o open) bool { return o.call == res })
				if k < 0 {
					found["tool_result_orphaned "+ref.ID+" "+res] = true
					continue
				}
				pending = slices.Delete(pending, k, k+1)
			}
			if len(ref.ToolCallIDs) > 0 || (len(ref.ResultIDs) == 0 && ref.Role != transcript.RoleTool) {
				for _, o := range pending {
					found["tool_call_unanswered "+g.ID(o.node)+" "+o.call] = true
				}
				pending = nil
			}
			for _, c := range ref.ToolCallIDs {
				pending = append(pending, open{c, x})
			}
		}
	}
	return found, visible
}

// TestLinearChecksAgreeWithRenderingEveryTip: the one-pass rendering and
// tool-adjacency checks say what rendering every branch tip with
// render.Build says, on random branching sessions.
func TestLinearChecksAgreeWithRenderingEveryTip(t *testing.T) {
	substituted, compared := 0, 0
	for seed := uint64(1); seed <= 60; seed++ {
		dir := randomSession(t, seed, 40+int(seed%5)*20)
		s, err := store.Open(dir, store.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var got []Finding
		c := &checker{ctx: context.Background(), s: s, res: &Result{}, fn: func(f Finding) { got = append(got, f) }, subLast: -1}
		if err := c.run(); err != nil {
			t.Fatal(err)
		}
		g := c.g
		// Rendering: a tip substitutes exactly when it lies at or below
		// the segment's last node and the rule accepts the segment.
		for _, tip := range g.Tips() {
			v, _ := render.Build(g, g.ID(tip), false)
			want := c.substitutes(tip)
			if v.Summarized() != want {
				t.Errorf("seed %d: tip %s: render substitutes=%v, verify's reasoning says %v", seed, g.ID(tip), v.Summarized(), want)
			}
		}
		naive, visible := naiveTools(t, g)
		linear := map[string]bool{}
		for _, f := range got {
			if f.Code != CodeToolCallUnanswered && f.Code != CodeToolResultOrphaned {
				continue
			}
			i, _ := g.Lookup(f.NodeID)
			if !visible[i] {
				continue // a covered node no tip reads: checked raw only
			}
			call := f.Msg[strings.Index(f.Msg, `"`)+1:]
			call = call[:strings.Index(call, `"`)]
			linear[f.Code+" "+f.NodeID+" "+call] = true
		}
		for k := range naive {
			if !linear[k] {
				t.Errorf("seed %d: rendering every tip finds %q, the linear check does not", seed, k)
			}
		}
		for k := range linear {
			if !naive[k] {
				t.Errorf("seed %d: the linear check finds %q, rendering every tip does not", seed, k)
			}
		}
		s.Close()
		if c.subLast >= 0 {
			substituted++
		}
		compared += len(naive)
	}
	t.Logf("%d of 60 sessions substitute; %d violations compared", substituted, compared)
	// The random sessions must exercise both sides of the rule and many
	// violations, or this test proves nothing.
	if substituted < 10 || substituted > 55 || compared < 100 {
		t.Errorf("weak sample: %d of 60 sessions substitute, %d violations compared", substituted, compared)
	}
}

// TestRandomDamage: sessions damaged at random (re-pointed predecessors and
// so cycles, dangling links, duplicate ids, random coverage, HEAD and
// active summary anywhere) never panic the checker, and the findings are
// deterministic.
func TestRandomDamage(t *testing.T) {
	seen := map[string]bool{}
	for seed := uint64(1); seed <= 200; seed++ {
		r := rand.New(rand.NewPCG(seed, 99))
		dir := randomSession(t, seed, 30)
		data, _ := os.ReadFile(filepath.Join(dir, "nodes.jsonl"))
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		ids := []string{"ghost", "sys", "summary_r", "summary_z"}
		for i := 1; i < 30; i++ {
			ids = append(ids, fmt.Sprintf("n%d", i))
		}
		pick := func() string { return ids[r.IntN(len(ids))] }
		for k := 0; k < 1+r.IntN(4); k++ {
			i := r.IntN(len(lines))
			switch r.IntN(5) {
			case 0: // re-point a predecessor (cycles, dangling links)
				lines[i] = strings.Replace(lines[i], `"predecessor":"`, `"predecessor":"`+pick()+`","x":"`, 1)
			case 1: // a duplicate id
				lines = append(lines, strings.Replace(lines[i], `"id":"`, `"id":"`+pick()+`","y":"`, 1))
			case 2: // a second summary with random coverage
				cov := make([]string, r.IntN(5))
				for m := range cov {
					cov[m] = fmt.Sprintf("%q", pick())
				}
				lines = append(lines, fmt.Sprintf(`{"id":"summary_z","predecessor":%q,"role":"user","name":"context/summary","content":"[Previous conversation summary]\nz","metadata":{"compaction":true,"covers_ids":[%s]}}`, pick(), strings.Join(cov, ",")))
			case 3: // a child of a summary, a caller anywhere
				lines = append(lines, fmt.Sprintf(`{"id":"k%d","predecessor":%q,"role":"user","caller":%q,"content":"k"}`, k, pick(), pick()))
			case 4: // a tool result anywhere
				lines = append(lines, fmt.Sprintf(`{"id":"r%d","predecessor":%q,"role":"tool","tool_call_id":"c%sa","content":"r"}`, k, pick(), pick()))
			}
		}
		os.WriteFile(filepath.Join(dir, "nodes.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "session.json"), []byte(fmt.Sprintf(`{"format_version":1,"head":%q,"active_summary_id":%q,"active_summary_text":"x"}`, pick(), pick())), 0o644)
		os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(fmt.Sprintf(`{"type":"compaction_finished","summary_id":%q,"summarised_count":%d}`+"\n", pick(), r.IntN(4))), 0o644)
		var runs [2]string
		for k := range runs {
			var b strings.Builder
			_, err := Dir(context.Background(), dir, store.OpenOptions{}, Options{}, func(f Finding) {
				fmt.Fprintln(&b, f.Code, f)
				seen[f.Code] = true
			})
			if err != nil {
				var perr *transcript.ParseError
				if !errors.As(err, &perr) {
					t.Fatalf("seed %d: %v", seed, err)
				}
			}
			runs[k] = b.String()
		}
		if runs[0] != runs[1] {
			t.Fatalf("seed %d: findings differ between runs:\n%s\n---\n%s", seed, runs[0], runs[1])
		}
	}
	t.Logf("codes seen: %v", slices.Sorted(maps.Keys(seen)))
	if len(seen) < 12 {
		t.Errorf("the damage reaches only %d codes: %v", len(seen), seen)
	}
}

// TestRenderMismatchIsDetected: the comparison with render.Build reports a
// view that departs from the expectation. No session can make render and
// the rule disagree, so the checker is pointed at the relic instead of the
// active summary.
func TestRenderMismatchIsDetected(t *testing.T) {
	s, err := store.Open("../fixtures/compacted", store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := &checker{ctx: context.Background(), s: s, res: &Result{}}
	if err := c.checkStructure(); err != nil {
		t.Fatal(err)
	}
	if err := c.checkSummaries(); err != nil {
		t.Fatal(err)
	}
	c.buf = nil
	c.active = c.segs[0] // summary_first, a relic: render.Build uses summary_second
	if err := c.checkRendering(); err != nil {
		t.Fatal(err)
	}
	// HEAD a8 and the fork a4x (which holds summary_first's segment) both
	// depart from what summary_first would give.
	if len(c.buf) != 2 || c.buf[0].Code != CodeRenderMismatch || c.buf[0].NodeID != "a8" || c.buf[1].NodeID != "a4x" ||
		!strings.Contains(c.buf[0].Msg, `HEAD has "summary_second" at position 1 where docs/FORMAT.md §4 gives "summary_first"`) ||
		!strings.Contains(c.buf[1].Msg, `branch tip has "u1" at position 1 where docs/FORMAT.md §4 gives "summary_first"`) {
		t.Fatalf("findings %+v", c.buf)
	}
}
