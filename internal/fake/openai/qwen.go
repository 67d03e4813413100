package openai

import "encoding/json"

// Qwen Code's own compression (docs/INTEROP-qwen.md): its summarizer
// request ends with this directive, and it accepts only a reply holding a
// non-empty <state_snapshot> element.

// QwenCompressionCue is the end of Qwen Code's compression request.
const QwenCompressionCue = "produce the <state_snapshot> XML"

// QwenSnapshot is the fake's answer to Qwen Code's compression request.
const QwenSnapshot = "<analysis>The user ran shell commands in a scratch directory.</analysis>\n<state_snapshot>\n<overall_goal>Answer the user's short requests.</overall_goal>\n<current_plan>Nothing is pending.</current_plan>\n</state_snapshot>"

// qwenAgentCall is [[spawn: TASK]] for Qwen Code, whose sub-agent tool is
// "agent" {description, prompt, subagent_type}: false when the request
// does not offer it.
func (s *Server) qwenAgentCall(task string, tools []string) (Call, bool) {
	for _, t := range tools {
		if t == "agent" {
			args, _ := json.Marshal(map[string]any{"description": "helper task", "prompt": task, "subagent_type": "general-purpose"})
			return Call{ID: s.nextCallID(), Name: "agent", Arguments: string(args)}, true
		}
	}
	return Call{}, false
}
