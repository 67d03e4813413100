package openai

import "strings"

// PiCompactionCue is what pi's compaction prompts say (its
// SUMMARIZATION_PROMPT and UPDATE_SUMMARIZATION_PROMPT of
// core/compaction/compaction.js, docs/INTEROP-pi.md): a request whose last
// user message holds it is a compaction and gets SummaryText, as Codex's
// CompactionCue does.
const PiCompactionCue = "context checkpoint summary"

// piTurnPrefixCue opens pi's prompt for the prefix of a split turn, the
// other summary a compaction may ask for.
const piTurnPrefixCue = "This is the PREFIX of a turn that was too large to keep"

func isPiCompaction(lastUser string) bool {
	return strings.Contains(lastUser, PiCompactionCue) || strings.Contains(lastUser, piTurnPrefixCue) ||
		strings.Contains(lastUser, "<previous-summary>") && strings.Contains(lastUser, "Update the existing structured summary")
}

// isOpenClawContext reports a user message OpenClaw adds after the user's
// own (its internal runtime context): the script reads the user's.
func isOpenClawContext(text string) bool {
	return strings.Contains(text, "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>")
}
