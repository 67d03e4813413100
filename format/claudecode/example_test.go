package claudecode_test

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/ctxfold/ctxfold/format/claudecode"
	"github.com/ctxfold/ctxfold/transcript"
)

// printSink prints each node as it arrives.
type printSink struct{}

func (printSink) Conversation(name string) (transcript.ImportSink, error) {
	fmt.Println("conversation", name)
	return printSink{}, nil
}
func (printSink) Node(n transcript.Node) error {
	line := fmt.Sprintf("%s %s", n.ID, n.Role)
	if n.Predecessor != "" {
		line += " after " + n.Predecessor
	}
	if n.Caller != "" {
		line += " called by " + n.Caller
	}
	fmt.Println(line)
	return nil
}
func (printSink) SetHead(id string)                    { fmt.Println("head", id) }
func (printSink) SetModel(model string)                { fmt.Println("model", model) }
func (printSink) Count(record, outcome, reason string) {}
func (printSink) Warn(file string, line int, msg string) {
	fmt.Printf("warning: %s:%d: %s\n", filepath.Base(file), line, msg)
}

// A Claude Code 1.x session with inline sidechains, and a sub-agent file
// found beside it: streamed lines merge (w1), results chain after their
// call, sidechains hang from the Task call that sent their prompt.
func ExampleImport() {
	file := filepath.Join("..", "..", "fixtures", "import", "claude-code", "inline", "sess-0002.jsonl")
	err := claudecode.Import(context.Background(), []string{file}, claudecode.Options{}, printSink{})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// conversation sess-0002
	// warning: sess-0002.jsonl:10: tool result for "t9" has no open tool call on its chain; kept as text
	// warning: sess-0002.jsonl:11: parent "missing-parent" not found; imported as a root
	// v1 user
	// w1 assistant after v1
	// x1 user called by w1
	// x2 assistant after x1 called by w1
	// y1 user after w1
	// y2 user after y1
	// z1 assistant after y2
	// y3 user after z1
	// q1 user
	// q2 assistant after q1
	// o1 user called by w1
	// o2 assistant after o1 called by w1
	// model claude-sonnet-4-20250514
	// head q2
}
