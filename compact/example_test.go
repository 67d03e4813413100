package compact_test

import (
	"fmt"

	"github.com/ctxfold/ctxfold/compact"
	"github.com/ctxfold/ctxfold/transcript"
)

// A plan over a rendered view: the system prompt stays, the oldest turn is
// folded, and the kept tail starts at a user message and fits the target.
// Token counts come from estimate in real use.
func ExampleMakePlan() {
	msg := func(id, pred string, role transcript.Role, text string) *transcript.Node {
		return &transcript.Node{ID: id, Predecessor: pred, Role: role, Content: transcript.TextContent(text)}
	}
	view := []*transcript.Node{
		msg("sys", "", transcript.RoleSystem, "You are terse."),
		msg("u1", "sys", transcript.RoleUser, "Load sales.csv."),
		msg("a1", "u1", transcript.RoleAssistant, "Loaded 48213 rows."),
		msg("u2", "a1", transcript.RoleUser, "Dedupe on (date, sku)."),
		msg("a2", "u2", transcript.RoleAssistant, "23 duplicates removed."),
		msg("u3", "a2", transcript.RoleUser, "Top region?"),
		msg("a3", "u3", transcript.RoleAssistant, "EU."),
	}
	p := compact.MakePlan(compact.PlanInput{Nodes: view, Tokens: []int{10, 40, 40, 20, 20, 10, 10}, Total: 153, Target: 60})
	fmt.Println("covers:", p.CoversIDs)
	fmt.Println("splice after:", p.Predecessor)
	fmt.Println("kept:", p.KeptIDs)
	// Output:
	// covers: [u1 a1]
	// splice after: sys
	// kept: [u2 a2 u3 a3]
}
