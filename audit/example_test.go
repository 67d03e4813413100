package audit_test

import (
	"encoding/json"
	"fmt"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/transcript"
)

// Extract the facts of two turns and check them against a summary that
// kept the request and the command but not the user's rule.
func ExampleExtract() {
	args, _ := json.Marshal(map[string]string{"command": "go test ./internal/parse"})
	nodes := []*transcript.Node{
		{ID: "u1", Role: transcript.RoleUser, Content: transcript.TextContent("Fix internal/parse/lex.go. Never change the token names.")},
		{ID: "a1", Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{{ID: "c1", Name: "Bash", Arguments: args}}},
	}
	m := audit.NewMatcher("## Objective\nFix internal/parse/lex.go.\n## Commands run\n- go test ./internal/parse\n")
	for _, f := range audit.Extract(nodes, nil) {
		fmt.Printf("%-11s kept=%-5v %s\n", f.Kind, m.Has(f), f.Text)
	}
	// Output:
	// instruction kept=false Never change the token names.
	// request     kept=true  Fix internal/parse/lex.go.
	// path        kept=true  internal/parse/lex.go
	// command     kept=true  go test ./internal/parse
	// path        kept=true  ./internal/parse
}
