package openai

// Qwen Code's own compression (docs/INTEROP-qwen.md): its summarizer
// request ends with this directive, and it accepts only a reply holding a
// non-empty <state_snapshot> element.

// QwenCompressionCue is the end of Qwen Code's compression request.
const QwenCompressionCue = "produce the <state_snapshot> XML"

// QwenSnapshot is the fake's answer to Qwen Code's compression request.
const QwenSnapshot = "<analysis>The user ran shell commands in a scratch directory.</analysis>\n<state_snapshot>\n<overall_goal>Answer the user's short requests.</overall_goal>\n<current_plan>Nothing is pending.</current_plan>\n</state_snapshot>"
