package pi

// This file reads one pi session entry and turns the messages it carries
// into nodes, as pi's convertToLlm (core/messages.js) turns them into the
// messages it sends.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// The text pi wraps a summary in when it sends it (COMPACTION_SUMMARY_* and
// BRANCH_SUMMARY_* of core/messages.js, 0.73).
const (
	compactionPrefix    = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
	compactionSuffix    = "\n</summary>"
	branchSummaryPrefix = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
	branchSummarySuffix = "</summary>"
)

// entry is one line of a session file (docs/session-format.md of the
// package): the header ("session") or a tree entry with id and parentId.
type entry struct {
	Type      string          `json:"type"`
	ID        *string         `json:"id"`
	ParentID  *string         `json:"parentId"`
	Timestamp json.RawMessage `json:"timestamp"`
	Message   *message        `json:"message"`
	// The header.
	Version int    `json:"version"`
	Cwd     string `json:"cwd"`
	// compaction and branch_summary.
	Summary             *string `json:"summary"`
	FirstKeptEntryID    string  `json:"firstKeptEntryId"`
	FirstKeptEntryIndex *int    `json:"firstKeptEntryIndex"`
	TokensBefore        *int64  `json:"tokensBefore"`
	FromID              string  `json:"fromId"`
	FromHook            bool    `json:"fromHook"`
	// custom_message (and custom).
	CustomType string          `json:"customType"`
	Content    json.RawMessage `json:"content"`
	// model_change.
	Provider string `json:"provider"`
	ModelID  string `json:"modelId"`
}

// message is an AgentMessage: pi-ai's user, assistant and toolResult
// messages and the coding agent's own roles.
type message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Model      string          `json:"model"`
	Provider   string          `json:"provider"`
	API        string          `json:"api"`
	Usage      *usage          `json:"usage"`
	StopReason string          `json:"stopReason"`
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	IsError    bool            `json:"isError"`
	// bashExecution.
	Command            string `json:"command"`
	Output             string `json:"output"`
	ExitCode           *int64 `json:"exitCode"`
	Cancelled          bool   `json:"cancelled"`
	Truncated          bool   `json:"truncated"`
	FullOutputPath     string `json:"fullOutputPath"`
	ExcludeFromContext bool   `json:"excludeFromContext"`
	// branchSummary / compactionSummary held as a message.
	Summary string `json:"summary"`
}

type usage struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
}

// block is one content block of a message.
type block struct {
	Type              string          `json:"type"`
	Text              *string         `json:"text"`
	Thinking          *string         `json:"thinking"`
	ThinkingSignature string          `json:"thinkingSignature"`
	Redacted          bool            `json:"redacted"`
	ID                string          `json:"id"`
	Name              string          `json:"name"`
	Arguments         json.RawMessage `json:"arguments"`
	Data              string          `json:"data"`
	MimeType          string          `json:"mimeType"`
}

// skipReply says why pi never sends an assistant message again, "" when it does
// (transformMessages of pi-ai skips errored and aborted replies).
func skipReply(m *message) string {
	if m.StopReason == "error" || m.StopReason == "aborted" {
		return "an " + m.StopReason + " reply: pi never sends it again"
	}
	return ""
}

// blocks decodes content: a string is one text block.
func blocks(raw json.RawMessage) ([]block, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := input.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []block{{Type: "text", Text: &s}}, nil
	}
	var out []block
	if err := input.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("content: expected a string or an array of blocks: %s", input.JSONErrorText(err))
	}
	return out, nil
}

// userContent is a user message's content as a node holds it: a string
// stays a string, a block list stays blocks (pi sends each as it is).
func userContent(raw json.RawMessage) (transcript.Content, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := input.Unmarshal(raw, &s); err != nil {
			return transcript.Content{}, err
		}
		return transcript.TextContent(s), nil
	}
	bs, err := blocks(raw)
	if err != nil {
		return transcript.Content{}, err
	}
	c := transcript.Content{IsBlocks: true, Blocks: []transcript.Block{}}
	for _, b := range bs {
		switch b.Type {
		case "text":
			c.Blocks = append(c.Blocks, transcript.Block{Type: transcript.BlockText, Text: str(b.Text)})
		case "image":
			c.Blocks = append(c.Blocks, input.Image("", b.MimeType, b.Data))
		default:
			return c, fmt.Errorf("content: unknown block type %q in a user message", b.Type)
		}
	}
	return c, nil
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// assistantNode fills n from an assistant message: its text and thinking
// blocks in order, its tool calls, the usage of the request that produced
// it (the whole prompt: pi-ai splits it into input, cacheRead and
// cacheWrite).
func assistantNode(n *transcript.Node, m *message) error {
	bs, err := blocks(m.Content)
	if err != nil {
		return err
	}
	n.Role = transcript.RoleAssistant
	n.Content = transcript.Content{IsBlocks: true, Blocks: []transcript.Block{}}
	for _, b := range bs {
		switch b.Type {
		case "text":
			n.Content.Blocks = append(n.Content.Blocks, transcript.Block{Type: transcript.BlockText, Text: str(b.Text)})
		case "thinking":
			tb := transcript.Block{Type: transcript.BlockThinking, Text: str(b.Thinking), Signature: b.ThinkingSignature}
			if b.Redacted {
				tb.Extra = map[string]json.RawMessage{"redacted": json.RawMessage("true")}
			}
			n.Content.Blocks = append(n.Content.Blocks, tb)
		case "toolCall":
			if b.ID == "" {
				return fmt.Errorf("a toolCall block without an id")
			}
			args := bytes.TrimSpace(b.Arguments)
			if len(args) == 0 || string(args) == "null" {
				args = json.RawMessage("{}")
			}
			n.ToolCalls = append(n.ToolCalls, transcript.ToolCall{ID: b.ID, Name: b.Name, Arguments: append(json.RawMessage(nil), args...)})
		default:
			return fmt.Errorf("content: unknown block type %q in an assistant message", b.Type)
		}
	}
	if u := m.Usage; u != nil && (u.Input|u.Output|u.CacheRead|u.CacheWrite) != 0 {
		n.Usage = &transcript.Usage{InputTokens: u.Input + u.CacheRead + u.CacheWrite, OutputTokens: u.Output, CachedInputTokens: u.CacheRead}
		if u.CacheWrite != 0 {
			n.Usage.Extra = map[string]json.RawMessage{"cache_write_tokens": input.Raw(u.CacheWrite)}
		}
	}
	if m.Model != "" {
		n.SetMeta("model", m.Model)
	}
	if m.StopReason != "" {
		n.SetMeta("stop_reason", m.StopReason)
	}
	return nil
}

// toolNode fills n from a toolResult message: pi sends its text parts
// joined by newlines, its images after them.
func toolNode(n *transcript.Node, m *message) error {
	if m.ToolCallID == "" {
		return fmt.Errorf("a toolResult message without a toolCallId")
	}
	bs, err := blocks(m.Content)
	if err != nil {
		return err
	}
	n.Role, n.ToolCallID, n.Name = transcript.RoleTool, m.ToolCallID, m.ToolName
	var texts []string
	var images []transcript.Block
	for _, b := range bs {
		switch b.Type {
		case "text":
			texts = append(texts, str(b.Text))
		case "image":
			images = append(images, input.Image("", b.MimeType, b.Data))
		default:
			return fmt.Errorf("content: unknown block type %q in a tool result", b.Type)
		}
	}
	text := strings.Join(texts, "\n")
	n.Content = transcript.TextContent(text)
	if len(images) > 0 {
		n.Content = transcript.Content{IsBlocks: true, Blocks: append([]transcript.Block{{Type: transcript.BlockText, Text: text}}, images...)}
	}
	if m.IsError {
		n.SetMeta("is_error", true)
	}
	return nil
}

// bashText is what pi sends for a bashExecution message (bashExecutionToText).
func bashText(m *message) string {
	text := "Ran `" + m.Command + "`\n"
	if m.Output != "" {
		text += "```\n" + m.Output + "\n```"
	} else {
		text += "(no output)"
	}
	if m.Cancelled {
		text += "\n\n(command cancelled)"
	} else if m.ExitCode != nil && *m.ExitCode != 0 {
		text += fmt.Sprintf("\n\nCommand exited with code %d", *m.ExitCode)
	}
	if m.Truncated && m.FullOutputPath != "" {
		text += "\n\n[Output truncated. Full output: " + m.FullOutputPath + "]"
	}
	return text
}

// textBlocks is one text block, as pi sends its summaries and bash runs.
func textBlocks(s string) transcript.Content {
	return transcript.Content{IsBlocks: true, Blocks: []transcript.Block{{Type: transcript.BlockText, Text: s}}}
}

// stamp is a timestamp as RFC 3339: entries carry ISO strings, messages
// Unix milliseconds.
func stamp(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	if raw[0] != '"' {
		return ""
	}
	if len(raw) >= 2 && raw[len(raw)-1] == '"' && !bytes.ContainsAny(raw[1:len(raw)-1], `"\`) {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	_ = input.Unmarshal(raw, &s)
	return s
}
