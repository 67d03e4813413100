package openai

import "strings"

// Crush's own requests (docs/INTEROP-crush.md): its summarizer's last user
// message and its title generator's both quote the user's text, markers
// included, so their cues win over the markers.
const (
	// CrushSummaryCue is the prompt of Crush's summarize request (its
	// buildSummaryPrompt), sent after the whole conversation.
	CrushSummaryCue = "Provide a detailed summary of our conversation above."
	// CrushTitleCue starts the user message of Crush's title request.
	CrushTitleCue = "Generate a concise title for the following content:"
	// CrushTitle is the fake's answer to a title request.
	CrushTitle = "Fake session title"
)

// crushReply is the fake's answer to Crush's summarize or title request
// ("" for any other request).
func crushReply(lastUser string) string {
	switch {
	case strings.HasPrefix(lastUser, CrushSummaryCue):
		return SummaryText
	case strings.HasPrefix(lastUser, CrushTitleCue):
		return CrushTitle
	}
	return ""
}
