package fit_test

import (
	"context"
	"fmt"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/fit"
	"github.com/ctxfold/ctxfold/transcript"
)

func ExampleFit() {
	nodes := []*transcript.Node{
		{ID: "sys", Role: transcript.RoleSystem, Content: transcript.TextContent("You are terse.")},
		{ID: "u1", Role: transcript.RoleUser, Content: transcript.TextContent("Say hi.")},
		{ID: "a1", Role: transcript.RoleAssistant, Content: transcript.TextContent("Hi.")},
	}
	out, rep, err := fit.Fit(context.Background(), nodes, fit.Options{Estimate: estimate.Options{Model: "gpt-4o"}, Margin: fit.DefaultMargin})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(out), rep.Fitted, len(rep.Transformations), rep.OutputReserve)
	// Output: 3 true 0 16384
}
