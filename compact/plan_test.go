package compact

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/transcript"
)

// linear builds a view from a compact spec: "s" system, "u" user, "a"
// assistant text, "c" assistant with one tool call answered by the next
// "t" tool node, "S" a previous summary covering "p1 p2". Tokens per node
// come from toks (same length).
func linear(t *testing.T, spec string) []*transcript.Node {
	t.Helper()
	var nodes []transcript.Node
	call := 0
	for i, f := range strings.Fields(spec) {
		id := f + string(rune('0'+i/10)) + string(rune('0'+i%10))
		n := transcript.Node{ID: id}
		switch f {
		case "s":
			n.Role, n.Content = transcript.RoleSystem, transcript.TextContent("system")
		case "u":
			n.Role, n.Content = transcript.RoleUser, transcript.TextContent("question")
		case "a":
			n.Role, n.Content = transcript.RoleAssistant, transcript.TextContent("answer")
		case "c":
			call++
			n.Role = transcript.RoleAssistant
			n.ToolCalls = []transcript.ToolCall{{ID: "call" + id, Name: "bash"}}
		case "t":
			n.Role, n.ToolCallID, n.Content = transcript.RoleTool, "call"+nodes[len(nodes)-1].ID, transcript.TextContent("out")
		case "S":
			n.ID = "summary_prev"
			n.Role, n.Name = transcript.SummaryRole, transcript.SummaryName
			n.Content = transcript.TextContent(transcript.SummaryPrefix + "## Objective\nold")
			n.SetMeta("compaction", true)
			n.SetMeta("covers_ids", []string{"p1", "p2"})
			n.Predecessor = "s00"
		default:
			t.Fatalf("bad spec %q", f)
		}
		if i > 0 && f != "S" {
			n.Predecessor = nodes[len(nodes)-1].ID
		}
		nodes = append(nodes, n)
	}
	return sessiontest.Pointers(nodes)
}

func ids(nodes []*transcript.Node, from, to int) []string {
	var out []string
	for _, n := range nodes[from:to] {
		out = append(out, n.ID)
	}
	return out
}

func TestPlanRules(t *testing.T) {
	cases := []struct {
		name    string
		spec    string
		toks    []int
		target  int
		noop    string
		cut     int // expected first kept position
		covered int // expected number of newly covered nodes
		within  bool
	}{
		{name: "at or below the target is a no-op", spec: "s u a u a", toks: []int{10, 10, 10, 10, 10}, target: 53, noop: ReasonBelowTarget},
		{name: "the longest tail that fits", spec: "s u a u a u a u a", toks: []int{5, 10, 10, 10, 10, 10, 10, 10, 10}, target: 40, cut: 5, covered: 4},
		{name: "latest turn alone exceeds the target: it stays intact", spec: "s u a u a u a", toks: []int{5, 10, 10, 10, 10, 100, 100}, target: 50, cut: 5, covered: 4},
		{name: "a request and one reply: no-op", spec: "s u a", toks: []int{5, 100, 100}, target: 50, noop: ReasonNoBoundary},
		{name: "a request and one step: no-op", spec: "s u c t", toks: []int{5, 100, 100, 100}, target: 50, noop: ReasonNoBoundary},
		{name: "one long turn: the tail starts at a step", spec: "s u c t c t c t c t a", toks: []int{5, 10, 30, 30, 30, 30, 30, 30, 10, 10, 10}, target: 40, cut: 8, covered: 7, within: true},
		{name: "one long turn: four conversational messages", spec: "s u a c t a c t a c t a c t a", toks: []int{5, 10, 30, 30, 30, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5}, target: 22, cut: 5, covered: 4, within: true},
		{name: "one long turn after a summary", spec: "s S c t c t c t", toks: []int{5, 50, 30, 30, 30, 30, 30, 30}, target: 70, cut: 6, covered: 4, within: true},
		{name: "a long latest turn after others stays intact", spec: "s u a u c t c t c t a", toks: []int{5, 10, 10, 10, 30, 30, 30, 30, 10, 10, 10}, target: 40, cut: 3, covered: 2},
		{name: "a long turn a previous compaction kept whole stays so", spec: "s S u c t c t c t", toks: []int{5, 50, 10, 30, 30, 30, 30, 30, 30}, target: 70, noop: ReasonNothingNew},
		{name: "one long turn whose latest step exceeds the target", spec: "s u c t c t", toks: []int{5, 10, 30, 30, 100, 100}, target: 50, cut: 4, covered: 3, within: true},
		{name: "last two turns exceed the target: cut at the latest user boundary", spec: "s u a u a u a", toks: []int{5, 10, 10, 30, 30, 10, 10}, target: 25, cut: 5, covered: 4},
		{name: "a tool call stays with its result in the tail", spec: "s u a u c t", toks: []int{5, 30, 30, 10, 10, 10}, target: 40, cut: 3, covered: 2},
		{name: "at least four conversational messages, past the target", spec: "s u a u c t u c t u a", toks: []int{5, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10}, target: 60, cut: 3, covered: 2},
		{name: "the cut never falls between a call and its results", spec: "s u c t u c t", toks: []int{1, 50, 50, 50, 5, 5, 5}, target: 30, cut: 4, covered: 3},
		{name: "re-compaction with nothing new is a no-op", spec: "s S u a", toks: []int{5, 50, 50, 50}, target: 60, noop: ReasonNothingNew},
		{name: "re-compaction extends the previous segment", spec: "s S u a u a", toks: []int{5, 50, 50, 50, 10, 10}, target: 20, cut: 4, covered: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nodes := linear(t, tc.spec)
			total := 3
			for _, k := range tc.toks {
				total += k
			}
			p := MakePlan(PlanInput{Nodes: nodes, Tokens: tc.toks, Total: total, Target: tc.target})
			if tc.noop != "" {
				if !p.NoOp || p.Reason != tc.noop {
					t.Fatalf("want no-op %q, got NoOp=%v %q (cut %d)", tc.noop, p.NoOp, p.Reason, p.Cut)
				}
				return
			}
			if p.NoOp {
				t.Fatalf("unexpected no-op: %s", p.Reason)
			}
			if p.Cut != tc.cut || len(p.NewIDs) != tc.covered {
				t.Fatalf("cut %d covering %v, want cut %d covering %d", p.Cut, p.NewIDs, tc.cut, tc.covered)
			}
			if want := map[bool]transcript.Role{false: transcript.RoleUser, true: transcript.RoleAssistant}[tc.within]; nodes[p.Cut].Role != want || p.WithinTurn != tc.within {
				t.Fatalf("tail starts at %s (within the turn: %v)", nodes[p.Cut].Role, p.WithinTurn)
			}
			if slices.Contains(p.CoversIDs, nodes[0].ID) {
				t.Fatal("the root is covered")
			}
			if p.Previous != nil {
				want := append([]string{"p1", "p2"}, ids(nodes, p.Start, p.Cut)...)
				if !slices.Equal(p.CoversIDs, want) || p.Predecessor != "s00" {
					t.Fatalf("covers %v pred %q, want %v pred s00", p.CoversIDs, p.Predecessor, want)
				}
				for _, id := range p.CoversIDs {
					if strings.HasPrefix(id, transcript.SummaryIDPrefix) {
						t.Fatalf("covers_ids names a summary: %v", p.CoversIDs)
					}
				}
			} else if p.Predecessor != nodes[0].ID {
				t.Fatalf("splice point %q, want the root", p.Predecessor)
			}
		})
	}
}

// TestPlanAdjacencyProperty: over 1,000 generated tool-heavy sessions and
// every keep size that changes the plan, no cut separates a tool call from
// its results, the tail starts at a user message that answers no call, a
// system root is never covered while a user root always is, and the
// compacted view passes the adjacency check.
func TestPlanAdjacencyProperty(t *testing.T) {
	const sessions, groups = 1000, 8
	var plans, folded atomic.Int64
	t.Run("group", func(t *testing.T) {
		for g := 0; g < groups; g++ {
			t.Run(fmt.Sprint(g), func(t *testing.T) {
				t.Parallel()
				r := rand.New(rand.NewPCG(1, uint64(g)))
				for s := g; s < sessions; s += groups {
					p, f := adjacencyProperty(t, s, r)
					plans.Add(p)
					folded.Add(f)
				}
			})
		}
	})
	if folded.Load() < sessions {
		t.Fatalf("only %d of %d plans folded anything; the generator is too tame", folded.Load(), plans.Load())
	}
	t.Logf("%d sessions, %d plans, %d folding", sessions, plans.Load(), folded.Load())
}

func adjacencyProperty(t *testing.T, s int, r *rand.Rand) (plans, folded int64) {
	gen := sessiontest.Generate(r, 1+r.IntN(12))
	// One session in three is user-rooted, as imported from Claude Code,
	// Codex or Gemini: no system prompt before the first request.
	userRooted := r.IntN(3) == 0
	if userRooted {
		gen = gen[1:]
		gen[0].Predecessor = ""
	}
	nodes := sessiontest.Pointers(gen)
	answered := answeredCalls(nodes)
	toks := make([]int, len(nodes))
	total := 3
	for i := range toks {
		toks[i] = 1 + r.IntN(400)
		total += toks[i]
	}
	// Every keep size that matters: each suffix sum, one below it, and
	// the extremes.
	keeps := []int{0, 1, total, total + 1}
	sum := 0
	for i := len(toks) - 1; i >= 0; i-- {
		sum += toks[i]
		keeps = append(keeps, sum, sum-1)
	}
	summary := &transcript.Node{ID: "summary_x", Role: transcript.SummaryRole, Content: transcript.TextContent(transcript.SummaryPrefix + "x")}
	for _, keep := range keeps {
		plans++
		p := MakePlan(PlanInput{Nodes: nodes, Tokens: toks, Total: total, Target: keep})
		if p.NoOp {
			continue
		}
		folded++
		tail := nodes[p.Cut]
		switch {
		case p.WithinTurn:
			// One long turn: the tail starts at a new response right after
			// tool results, and no later request could have started it.
			if tail.Role != transcript.RoleAssistant || len(nodes[p.Cut-1].ToolResults()) == 0 {
				t.Fatalf("session %d keep %d: tail within the turn starts at %q (%s)", s, keep, tail.ID, tail.Role)
			}
			for i := p.Start + 1; i < len(nodes); i++ {
				if nodes[i].IsTurnStart() && !nodes[i-1].IsTurnStart() {
					t.Fatalf("session %d keep %d: cut within a turn although %q starts one", s, keep, nodes[i].ID)
				}
			}
		case !tail.IsTurnStart():
			t.Fatalf("session %d keep %d: tail starts at %q (%s)", s, keep, tail.ID, tail.Role)
		}
		view := append([]*transcript.Node{summary}, nodes[p.Cut:]...)
		if userRooted {
			// The first request enters the summary, which becomes a root.
			if p.Start != 0 || len(p.CoversIDs) == 0 || p.CoversIDs[0] != nodes[0].ID || p.Predecessor != "" {
				t.Fatalf("session %d keep %d: user root %q not covered (start %d, covers %v, predecessor %q)",
					s, keep, nodes[0].ID, p.Start, p.CoversIDs, p.Predecessor)
			}
		} else {
			if p.Start < 1 || slices.Contains(p.CoversIDs, "sys") || p.Predecessor != "sys" {
				t.Fatalf("session %d keep %d: the system root is covered", s, keep)
			}
			view = append([]*transcript.Node{nodes[0]}, view...)
		}
		if err := checkAdjacencyWith(view, answered); err != nil {
			t.Fatalf("session %d keep %d: %v", s, keep, err)
		}
		// The covered part holds each of its calls' results too.
		if err := checkAdjacencyWith(nodes[p.Start:p.Cut], answered); err != nil {
			t.Fatalf("session %d keep %d: covered part: %v", s, keep, err)
		}
	}
	return plans, folded
}

func TestTarget(t *testing.T) {
	for _, tc := range []struct{ window, want int }{{0, 8000}, {32000, 8000}, {128000, 12800}, {200000, 20000}, {1000000, 40000}} {
		if got := Target(tc.window); got != tc.want {
			t.Errorf("Target(%d) = %d, want %d", tc.window, got, tc.want)
		}
	}
}

// TestPlanNeverCutsAnOpenCall: in foreign data a user message can sit
// between a call and its result; no cut may land there.
func TestPlanNeverCutsAnOpenCall(t *testing.T) {
	n := func(id string, role transcript.Role, text string) transcript.Node {
		return transcript.Node{ID: id, Role: role, Content: transcript.TextContent(text)}
	}
	nodes := []transcript.Node{
		n("sys", transcript.RoleSystem, "s"),
		n("u1", transcript.RoleUser, "first"),
		{ID: "a1", Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{{ID: "x", Name: "bash"}}},
		n("u2", transcript.RoleUser, "are you there?"),
		{ID: "t1", Role: transcript.RoleTool, ToolCallID: "x", Content: transcript.TextContent("late result")},
		n("a2", transcript.RoleAssistant, "done"),
		n("u3", transcript.RoleUser, "next"),
		n("a3", transcript.RoleAssistant, "ok"),
	}
	toks := []int{1, 10, 10, 10, 10, 10, 10, 10}
	for _, keep := range []int{20, 45, 50} {
		p := MakePlan(PlanInput{Nodes: sessiontest.Pointers(nodes), Tokens: toks, Total: 84, Target: keep})
		if p.NoOp || nodes[p.Cut].ID == "u2" {
			t.Fatalf("keep %d: cut at %q (no-op %v)", keep, nodes[p.Cut].ID, p.NoOp)
		}
		if nodes[p.Cut].ID != "u3" {
			t.Fatalf("keep %d: cut at %q, want u3", keep, nodes[p.Cut].ID)
		}
	}
}

// A session compacted by the tool it was imported from (Claude Code,
// Codex) renders with the summary as its first node: re-compaction must
// still find it, absorb it and extend its coverage.
func TestPlanSummaryAsRoot(t *testing.T) {
	nodes := linear(t, "S u a u a u a")
	nodes[0].Predecessor = ""
	nodes[1].Predecessor = "p2"
	p := MakePlan(PlanInput{Nodes: nodes, Tokens: []int{50, 50, 50, 10, 10, 10, 10}, Total: 193, Target: 25})
	if p.NoOp {
		t.Fatalf("unexpected no-op: %s", p.Reason)
	}
	if p.Previous != nodes[0] || p.Start != 1 {
		t.Fatalf("previous summary not found at the root: previous=%v start=%d", p.Previous, p.Start)
	}
	want := append([]string{"p1", "p2"}, ids(nodes, 1, p.Cut)...)
	if !slices.Equal(p.CoversIDs, want) || p.Predecessor != "" {
		t.Fatalf("covers %v pred %q, want %v pred null", p.CoversIDs, p.Predecessor, want)
	}
}

// A session imported from Claude Code, Codex or Gemini starts with the
// user's first request: it is covered like any turn (docs/COMPACT.md §2),
// and the summary becomes a root.
func TestPlanCoversAUserRoot(t *testing.T) {
	nodes := linear(t, "u a u a u a")
	p := MakePlan(PlanInput{Nodes: nodes, Tokens: []int{50, 50, 10, 10, 10, 10}, Total: 143, Target: 25})
	if p.NoOp {
		t.Fatalf("unexpected no-op: %s", p.Reason)
	}
	if p.Start != 0 || !slices.Equal(p.CoversIDs, ids(nodes, 0, p.Cut)) || p.Predecessor != "" {
		t.Fatalf("start %d covers %v pred %q, want the user root covered and pred null", p.Start, p.CoversIDs, p.Predecessor)
	}
}

// Consecutive user messages are one turn: a tail never starts between
// them (a Codex import's environment context precedes the request).
func TestPlanNeverSplitsConsecutiveUserMessages(t *testing.T) {
	nodes := linear(t, "u u c t c t a")
	p := MakePlan(PlanInput{Nodes: nodes, Tokens: []int{10, 10, 100, 100, 100, 100, 10}, Total: 433, Target: 50})
	// The two are one turn: the tail starts at a step of it, never at the
	// second user message.
	if p.NoOp || !p.WithinTurn || p.Cut != 6 || !slices.Equal(p.NewIDs, ids(nodes, 0, 6)) {
		t.Fatalf("want a cut within the turn at 6, got no-op %v %q cut %d covering %v", p.NoOp, p.Reason, p.Cut, p.NewIDs)
	}
}

// The prompt prefix is every leading system node, not just the root: a
// plan that would cover only a developer message before the first turn is
// a no-op, never an empty summary.
func TestPlanKeepsTheWholePromptPrefix(t *testing.T) {
	nodes := []*transcript.Node{
		{ID: "sys", Role: transcript.RoleSystem, Content: transcript.TextContent("base instructions")},
		{ID: "dev", Predecessor: "sys", Role: transcript.RoleSystem, Content: transcript.TextContent("permissions")},
		{ID: "u1", Predecessor: "dev", Role: transcript.RoleUser, Content: transcript.TextContent("hi")},
		{ID: "a1", Predecessor: "u1", Role: transcript.RoleAssistant, Content: transcript.TextContent("hello")},
	}
	p := MakePlan(PlanInput{Nodes: nodes, Tokens: []int{500, 500, 5, 5}, Total: 1010, Target: 100})
	if !p.NoOp || p.Start != 2 {
		t.Fatalf("plan %+v: want a no-op starting after the prefix", p)
	}
}

// Within one long turn, a step whose earlier call is still unanswered (a
// late result in foreign data) is no place for the tail to start: the cut
// never separates a call from its result (docs/FORMAT.md §2).
func TestPlanWithinTurnNeverCutsAnOpenCall(t *testing.T) {
	nodes := []transcript.Node{
		{ID: "u1", Role: transcript.RoleUser, Content: transcript.TextContent("do it")},
		{ID: "a1", Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{{ID: "x", Name: "bash"}, {ID: "y", Name: "bash"}}},
		{ID: "t1", Role: transcript.RoleTool, ToolCallID: "x", Content: transcript.TextContent("x out")},
		{ID: "a2", Role: transcript.RoleAssistant, Content: transcript.TextContent("waiting for y")},
		{ID: "t2", Role: transcript.RoleTool, ToolCallID: "y", Content: transcript.TextContent("late y out")},
		{ID: "a3", Role: transcript.RoleAssistant, Content: transcript.TextContent("done")},
	}
	toks := []int{10, 50, 50, 50, 50, 10}
	p := MakePlan(PlanInput{Nodes: sessiontest.Pointers(nodes), Tokens: toks, Total: 223, Target: 150})
	if p.NoOp || !p.WithinTurn || nodes[p.Cut].ID != "a3" {
		t.Fatalf("cut at %q (no-op %v %q, within %v), want a3", nodes[p.Cut].ID, p.NoOp, p.Reason, p.WithinTurn)
	}
}
