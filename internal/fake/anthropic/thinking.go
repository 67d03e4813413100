package anthropic

import (
	"strings"
	"time"
)

// A reply that thinks: Claude Opus 4.7 and later return their thinking
// omitted — a thinking block with a signature and no text — and a
// stream's final usage comes after its last block. Claude Code 2.1.222
// writes a sub-agent's lines before a late usage arrives, with the count
// the stream started with (docs/INTEROP-claude-code.md, "A sub-agent's
// thinking, counted at its start").
const (
	// MarkAgentThinking asks for a sub-agent whose prompt asks it for a
	// reply that thinks (MarkThinkingBash).
	MarkAgentThinking = "[[agent-thinking]]"
	// MarkThinkingBash asks for one assistant message with an omitted
	// thinking and a Bash call running the text up to "]]", its usage
	// sent thinkingUsageDelay after its last block.
	MarkThinkingBash = "[[thinking-bash:"
)

// thinkingSignature is the signature of the fake's omitted thinking:
// 6,000 bytes, as a signature of a thinking of about 2,000 tokens is.
var thinkingSignature = strings.Repeat("RmFrZVRoaW5raW5nU2lnbmF0dXJlMDEyMzQ1Njc4OQ==", 150)[:6000]

// thinkingUsageDelay is how late a thinking reply's usage comes: Claude
// Code 2.1.222 writes a sub-agent's lines with the stream's first count
// when it comes a second or more after the last block (a shorter wait
// and the lines carry the final count).
const thinkingUsageDelay = 1500 * time.Millisecond

// thinkingBash is MarkThinkingBash's reply.
func thinkingBash(cmd string) Reply {
	return Reply{StopReason: "tool_use", UsageDelay: thinkingUsageDelay, Content: []Block{
		{Type: "thinking", Signature: thinkingSignature},
		toolUse("Bash", map[string]any{"command": cmd, "description": "Scripted command after thinking"}),
	}}
}

// agentCall is a call of the sub-agent tool (Agent; Task in older
// clients) with prompt, of agentType.
func agentCall(req Request, prompt, agentType string) Reply {
	name := "Agent"
	if !hasTool(req, "Agent") && hasTool(req, "Task") {
		name = "Task"
	}
	return Reply{StopReason: "tool_use", Content: []Block{
		toolUse(name, map[string]any{"description": "Scripted sub-agent", "prompt": prompt, "subagent_type": agentType}),
	}}
}
