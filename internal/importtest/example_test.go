package importtest_test

import (
	"fmt"

	"github.com/ctxfold/ctxfold/internal/importtest"
	"github.com/ctxfold/ctxfold/transcript"
)

func ExampleTarget() {
	var tg importtest.Target
	sink, _ := tg.Conversation("demo")
	fmt.Println(sink.Node(transcript.Node{ID: "u1", Role: transcript.RoleUser}))
	// A node naming a predecessor not handed over yet breaks the contract.
	fmt.Println(sink.Node(transcript.Node{ID: "a1", Predecessor: "u0", Role: transcript.RoleAssistant}))
	fmt.Printf("%+v\n", importtest.StatsOf(tg.Convs[0].Nodes))
	// Output:
	// <nil>
	// node "a1" names "u0" before it was handed over
	// {Nodes:1 Summaries:0 User:1 Assistant:0 Tool:0 System:0 Calls:0 Results:0}
}
