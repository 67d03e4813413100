package estimate_test

import (
	"context"
	"fmt"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/transcript"
)

func ExampleText() {
	n, _ := estimate.Text(estimate.O200kBase, "Hello, world! <|endoftext|>")
	fmt.Println(n)
	// Output: 11
}

func ExampleNodes() {
	nodes := []*transcript.Node{
		{ID: "sys", Role: transcript.RoleSystem, Content: transcript.TextContent("You are terse.")},
		{ID: "u1", Role: transcript.RoleUser, Content: transcript.TextContent("Name a prime.")},
	}
	res, _ := estimate.Nodes(context.Background(), nodes, estimate.Options{Model: "gpt-4o"})
	fmt.Println(res.Total, res.Categories["system"], res.Categories["user"], res.Categories["overhead"])
	fmt.Println(res.Window, res.OutputReserve, res.InputBudget)
	// Output:
	// 17 4 4 9
	// 128000 16384 111616
}

func ExampleBudget() {
	b, _ := estimate.Budget(estimate.Options{Model: "claude-sonnet-4-5-20250929"})
	fmt.Println(b.Encoding, b.EncodingIsProxy, b.Window, b.OutputReserve, b.InputBudget)
	// Output: o200k_base true 200000 16384 183616
}
