package openai

import "encoding/json"

// CopilotCompactionCue is how GitHub Copilot CLI's compaction prompt
// begins (docs/INTEROP-copilot.md); a request whose last user message
// holds it gets CopilotSummaryText.
const CopilotCompactionCue = "Please create a detailed summary of the conversation so far."

// CopilotSummaryText is the fake's summary for Copilot CLI, in the tagged
// sections its prompt asks for.
const CopilotSummaryText = "<overview>\nThe user ran shell commands in a scratch directory and asked for short replies.\n</overview>\n\n<next_steps>\nNothing is pending.\n</next_steps>\n\n<checkpoint_title>\nShell commands run\n</checkpoint_title>"

// copilotTask is a call of Copilot CLI's task tool starting a sub-agent
// with prompt ([[spawn: PROMPT]] when the request offers task).
func copilotTask(id, prompt string) Call {
	args, _ := json.Marshal(map[string]any{"description": "Scripted sub-agent", "prompt": prompt, "agent_type": "task", "name": "helper"})
	return Call{ID: id, Name: "task", Arguments: string(args)}
}

func hasTool(tools []string, name string) bool {
	for _, t := range tools {
		if t == name {
			return true
		}
	}
	return false
}
