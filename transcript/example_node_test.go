package transcript_test

import (
	"fmt"
	"strings"

	"github.com/ctxfold/ctxfold/transcript"
)

// ExampleReadNodes reads a batch of nodes (the input of `ctxfold append
// --file`): an absent predecessor follows the node before.
func ExampleReadNodes() {
	batch := `{"id":"u1","role":"user","content":"What is 2+2?"}
{"id":"a1","role":"assistant","content":[{"type":"text","text":"4"}]}
`
	nodes, err := transcript.ReadNodes(strings.NewReader(batch), "batch.jsonl", 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range nodes {
		fmt.Printf("%s %s: %s\n", n.ID, n.Role, n.Content.PlainText())
	}
	// Output:
	// u1 user: What is 2+2?
	// a1 assistant: 4
}
