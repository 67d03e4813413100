// Command ctxfold inspects, measures, compacts and verifies LLM conversation
// transcripts stored as JSONL session directories.
package main

import (
	"os"

	"github.com/ctxfold/ctxfold/cmd"
)

func main() { os.Exit(cmd.Main()) }
