package openai

import "strings"

// OpenCodeCompactionCue is what OpenCode's (and Kilo's) summarizer
// request asks (docs/INTEROP-opencode.md): its user message quotes the
// whole conversation, markers included, so the cue must win over them.
const OpenCodeCompactionCue = "Create a new anchored summary from the conversation history"

// isCompactionRequest reports whether the last user message asks for a
// summary of the conversation, in any client's words the fake knows.
func isCompactionRequest(lastUser string) bool {
	return strings.Contains(lastUser, CompactionCue) || strings.Contains(lastUser, OpenCodeCompactionCue)
}
