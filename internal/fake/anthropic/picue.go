package anthropic

import "strings"

// isPiCompaction recognises pi's compaction prompts (lower-cased text):
// "Create a structured context checkpoint summary …", the update of a
// previous summary, and the prefix of a split turn (docs/INTEROP-pi.md).
func isPiCompaction(l string) bool {
	return strings.Contains(l, "context checkpoint summary") || strings.Contains(l, "update the existing structured summary") ||
		strings.Contains(l, "this is the prefix of a turn that was too large to keep")
}
