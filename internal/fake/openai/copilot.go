package openai

// CopilotCompactionCue is how GitHub Copilot CLI's compaction prompt
// begins (docs/INTEROP-copilot.md); a request whose last user message
// holds it gets CopilotSummaryText.
const CopilotCompactionCue = "Please create a detailed summary of the conversation so far."

// CopilotSummaryText is the fake's summary for Copilot CLI, in the tagged
// sections its prompt asks for.
const CopilotSummaryText = "<overview>\nThe user ran shell commands in a scratch directory and asked for short replies.\n</overview>\n\n<next_steps>\nNothing is pending.\n</next_steps>\n\n<checkpoint_title>\nShell commands run\n</checkpoint_title>"
