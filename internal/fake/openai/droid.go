package openai

import "strings"

// DroidCompactionCue is what Factory Droid's compaction request asks
// (docs/INTEROP-droid.md): it keeps the summary only when the reply wraps
// it in <summary> tags, and retries otherwise.
const DroidCompactionCue = "Remember to wrap your final summary in <summary> tags."

// droidSummary answers Droid's compaction request, or "" for any other.
func droidSummary(lastUser string) string {
	if !strings.Contains(lastUser, DroidCompactionCue) {
		return ""
	}
	return "<summary>\n" + SummaryText + "\n</summary>"
}
