package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ctxfold/ctxfold/transcript"
)

// OpenAIMessage is one Chat Completions message. Content is a string, a
// list of parts, or null (an assistant message that only calls tools).
type OpenAIMessage struct {
	Role       string           `json:"role"`
	Content    any              `json:"content"`
	ToolCalls  []OpenAIToolCall `json:"tool_calls,omitempty"`
	ToolCallID string           `json:"tool_call_id,omitempty"`
}

// OpenAIPart is one part of a multi-part message.
type OpenAIPart struct {
	Type     string          `json:"type"`
	Text     string          `json:"text,omitempty"`
	ImageURL *OpenAIImageURL `json:"image_url,omitempty"`
}

// OpenAIImageURL points at an image.
type OpenAIImageURL struct {
	URL string `json:"url"`
}

// OpenAIToolCall is an assistant's function call.
type OpenAIToolCall struct {
	ID       string         `json:"id"`
	Type     string         `json:"type"`
	Function OpenAIFunction `json:"function"`
}

// OpenAIFunction names the function and carries its JSON-encoded arguments.
type OpenAIFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// OpenAIMessages converts rendered nodes to Chat Completions messages.
// Rules (docs/FORMAT.md): thinking is not sent (the API has no field for
// it); tool_result blocks become tool messages placed before the rest of
// their node; an image whose source is not a URL becomes a text notice.
func OpenAIMessages(nodes []*transcript.Node) []OpenAIMessage {
	var out []OpenAIMessage
	for _, n := range nodes {
		out = append(out, OpenAIMessagesOf(n)...)
	}
	return out
}

// OpenAIMessagesOf converts one node (a node can yield several messages).
func OpenAIMessagesOf(n *transcript.Node) []OpenAIMessage {
	var out []OpenAIMessage
	if n.IsSummary() {
		// A client's own compaction, as the client sent it.
		if raw, ok := n.Metadata[transcript.MetaOpenAIMessages]; ok && json.Unmarshal(raw, &out) == nil && len(out) > 0 {
			return out
		}
		out = nil
	}
	if n.Role == transcript.RoleTool {
		return []OpenAIMessage{{Role: "tool", ToolCallID: n.ToolCallID, Content: n.Content.PlainText()}}
	}
	var parts []OpenAIPart
	var calls []OpenAIToolCall
	if n.Content.IsBlocks {
		for _, b := range n.Content.Blocks {
			switch b.Type {
			case transcript.BlockText:
				parts = append(parts, OpenAIPart{Type: "text", Text: b.Text})
			case transcript.BlockImage:
				if isURL(b.Source) {
					parts = append(parts, OpenAIPart{Type: "image_url", ImageURL: &OpenAIImageURL{URL: b.Source}})
				} else {
					parts = append(parts, OpenAIPart{Type: "text", Text: ImageNotice(b)})
				}
			case transcript.BlockToolResult:
				out = append(out, OpenAIMessage{Role: "tool", ToolCallID: b.ToolCallID, Content: b.Text})
			case transcript.BlockToolCall:
				calls = append(calls, openAICall(transcript.ToolCall{ID: b.ID, Name: b.Name, Arguments: b.Arguments}))
			}
		}
	} else if n.Content.Text != "" {
		parts = append(parts, OpenAIPart{Type: "text", Text: n.Content.Text})
	}
	for _, c := range n.ToolCalls {
		calls = append(calls, openAICall(c))
	}
	if len(parts) == 0 && len(calls) == 0 && len(out) > 0 {
		return out
	}
	msg := OpenAIMessage{Role: string(n.Role), ToolCalls: calls}
	switch {
	case len(parts) == 0 && len(calls) > 0:
		msg.Content = nil
	case len(parts) == 0:
		msg.Content = ""
	case allText(parts):
		texts := make([]string, len(parts))
		for i, p := range parts {
			texts[i] = p.Text
		}
		msg.Content = strings.Join(texts, "\n")
	default:
		msg.Content = parts
	}
	return append(out, msg)
}

func openAICall(c transcript.ToolCall) OpenAIToolCall {
	return OpenAIToolCall{ID: c.ID, Type: "function", Function: OpenAIFunction{Name: c.Name, Arguments: c.ArgumentsText()}}
}

func allText(parts []OpenAIPart) bool {
	for _, p := range parts {
		if p.Type != "text" {
			return false
		}
	}
	return true
}

func isURL(s string) bool {
	return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "data:")
}

// ImageNotice is the text that stands for an image that cannot be sent
// inline (a reference, not bytes).
func ImageNotice(b transcript.Block) string {
	mt := b.MediaType
	if mt == "" {
		mt = "image"
	}
	return fmt.Sprintf("[%s: %s]", mt, b.Source)
}

// AnthropicBody is a Messages API request body (model and max_tokens are
// the caller's to add).
type AnthropicBody struct {
	System   string             `json:"system,omitempty"`
	Messages []AnthropicMessage `json:"messages"`
	// Tools are the leading system nodes' metadata.tools, in Anthropic
	// form ({name, description, input_schema}).
	Tools []json.RawMessage `json:"tools,omitempty"`
}

// AnthropicMessage is one message; content is always a block list.
type AnthropicMessage struct {
	Role    string           `json:"role"`
	Content []AnthropicBlock `json:"content"`
}

// AnthropicBlock is one content block.
type AnthropicBlock struct {
	Type      string           `json:"type"`
	Text      string           `json:"text,omitempty"`
	Thinking  string           `json:"thinking,omitempty"`
	Signature string           `json:"signature,omitempty"`
	ID        string           `json:"id,omitempty"`
	Name      string           `json:"name,omitempty"`
	Input     json.RawMessage  `json:"input,omitempty"`
	ToolUseID string           `json:"tool_use_id,omitempty"`
	Content   string           `json:"content,omitempty"`
	IsError   bool             `json:"is_error,omitempty"`
	Source    *AnthropicSource `json:"source,omitempty"`
}

// AnthropicSource locates an image by URL.
type AnthropicSource struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// AnthropicRequest converts rendered nodes to a Messages body. Rules
// (docs/FORMAT.md): leading system nodes form `system`; a later system node
// becomes a user text block "[system] …", except one marked
// metadata.system_message (a client sent it as a system-role message, as
// Claude Code 2.1.3xx does), which stays a system-role message; the leading
// system nodes' metadata.tools become `tools`; tool nodes become tool_result
// blocks in a user message; consecutive same-role messages are merged with
// tool_result blocks first, as the API requires; thinking is sent only when
// it carries a signature.
func AnthropicRequest(nodes []*transcript.Node) AnthropicBody {
	var body AnthropicBody
	var system []string
	leading := true
	for _, n := range nodes {
		if n.Role == transcript.RoleSystem && leading {
			system = append(system, n.Content.PlainText())
			body.Tools = append(body.Tools, anthropicTools(n.Metadata["tools"])...)
			continue
		}
		leading = false
		role, blocks := anthropicBlocks(n)
		if len(blocks) == 0 {
			continue
		}
		if k := len(body.Messages) - 1; k >= 0 && body.Messages[k].Role == role {
			body.Messages[k].Content = append(body.Messages[k].Content, blocks...)
			continue
		}
		body.Messages = append(body.Messages, AnthropicMessage{Role: role, Content: blocks})
	}
	for k := range body.Messages {
		if body.Messages[k].Role == "user" {
			body.Messages[k].Content = resultsFirst(body.Messages[k].Content)
		}
	}
	if body.Messages == nil {
		body.Messages = []AnthropicMessage{}
	}
	body.System = strings.Join(system, "\n\n")
	return body
}

func anthropicBlocks(n *transcript.Node) (string, []AnthropicBlock) {
	switch n.Role {
	case transcript.RoleTool:
		// A tool node's error flag lives in metadata.is_error (ToolResults).
		isErr := false
		for _, r := range n.ToolResults() {
			isErr = isErr || (r.ToolCallID == n.ToolCallID && r.IsError)
		}
		return "user", []AnthropicBlock{{Type: "tool_result", ToolUseID: n.ToolCallID, Content: n.Content.PlainText(), IsError: isErr}}
	case transcript.RoleSystem:
		var sm bool
		if json.Unmarshal(n.Metadata["system_message"], &sm) == nil && sm {
			return "system", []AnthropicBlock{{Type: "text", Text: n.Content.PlainText()}}
		}
		return "user", []AnthropicBlock{{Type: "text", Text: "[system] " + n.Content.PlainText()}}
	}
	role := "user"
	if n.Role == transcript.RoleAssistant {
		role = "assistant"
	}
	var blocks []AnthropicBlock
	text := func(s string) {
		// The Messages API rejects a text block holding only whitespace
		// (400 "text content blocks must contain non-whitespace text");
		// the stored node keeps it, the request leaves it out.
		if strings.TrimSpace(s) != "" {
			blocks = append(blocks, AnthropicBlock{Type: "text", Text: s})
		}
	}
	if !n.Content.IsBlocks {
		text(n.Content.Text)
	} else {
		for _, b := range n.Content.Blocks {
			switch b.Type {
			case transcript.BlockText:
				text(b.Text)
			case transcript.BlockThinking:
				if b.Signature != "" {
					blocks = append(blocks, AnthropicBlock{Type: "thinking", Thinking: b.Text, Signature: b.Signature})
				}
			case transcript.BlockImage:
				if strings.HasPrefix(b.Source, "https://") || strings.HasPrefix(b.Source, "http://") {
					blocks = append(blocks, AnthropicBlock{Type: "image", Source: &AnthropicSource{Type: "url", URL: b.Source}})
				} else {
					text(ImageNotice(b))
				}
			case transcript.BlockToolCall:
				blocks = append(blocks, toolUse(transcript.ToolCall{ID: b.ID, Name: b.Name, Arguments: b.Arguments}))
			case transcript.BlockToolResult:
				blocks = append(blocks, AnthropicBlock{Type: "tool_result", ToolUseID: b.ToolCallID, Content: b.Text, IsError: b.IsError})
			}
		}
	}
	for _, c := range n.ToolCalls {
		blocks = append(blocks, toolUse(c))
	}
	return role, blocks
}

// anthropicTools converts tool definitions (docs/ESTIMATE.md: OpenAI,
// bare function or Anthropic form) to Anthropic form.
func anthropicTools(raw json.RawMessage) []json.RawMessage {
	var defs []map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &defs) != nil {
		return nil
	}
	out := make([]json.RawMessage, 0, len(defs))
	for _, d := range defs {
		if fn, ok := d["function"]; ok {
			var f map[string]json.RawMessage
			if json.Unmarshal(fn, &f) != nil {
				continue
			}
			d = f
		}
		if params, ok := d["parameters"]; ok {
			if _, has := d["input_schema"]; !has {
				d["input_schema"] = params
			}
			delete(d, "parameters")
		}
		delete(d, "type")
		if b, err := MarshalNoEscape(d); err == nil {
			out = append(out, b)
		}
	}
	return out
}

// toolUse converts a call; tool_use input must be an object, so a string
// holding a JSON object is decoded and anything else is wrapped.
func toolUse(c transcript.ToolCall) AnthropicBlock {
	input := json.RawMessage(c.ArgumentsText())
	var obj map[string]json.RawMessage
	if json.Unmarshal(input, &obj) != nil {
		wrapped, _ := json.Marshal(map[string]string{"arguments": c.ArgumentsText()})
		input = wrapped
	} else {
		var buf bytes.Buffer
		if json.Compact(&buf, input) == nil {
			input = buf.Bytes()
		}
	}
	return AnthropicBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: input}
}

func resultsFirst(blocks []AnthropicBlock) []AnthropicBlock {
	out := make([]AnthropicBlock, 0, len(blocks))
	for _, b := range blocks {
		if b.Type == "tool_result" {
			out = append(out, b)
		}
	}
	for _, b := range blocks {
		if b.Type != "tool_result" {
			out = append(out, b)
		}
	}
	return out
}

func writeOpenAI(w *bufio.Writer, src nodeSource) error {
	return writeJSONArray(w, src, OpenAIMessagesOf)
}

// writeJSONArray writes a JSON array with one element a line: what of
// returns for each node, in order (the OpenAI and Responses bodies).
func writeJSONArray[T any](w *bufio.Writer, src nodeSource, of func(*transcript.Node) []T) error {
	w.WriteString("[")
	first := true
	err := src.each(func(n *transcript.Node) error {
		for _, m := range of(n) {
			line, err := MarshalNoEscape(m)
			if err != nil {
				return err
			}
			if !first {
				w.WriteString(",")
			}
			first = false
			w.WriteString("\n")
			w.Write(line)
		}
		return nil
	})
	if err != nil {
		return err
	}
	w.WriteString("\n]\n")
	return nil
}

// MarshalNoEscape encodes v as compact JSON without HTML escaping (so "<"
// stays "<", as providers receive it) and without a trailing newline.
func MarshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func writeAnthropic(w *bufio.Writer, src nodeSource) error {
	var nodes []*transcript.Node
	err := src.each(func(n *transcript.Node) error {
		nodes = append(nodes, n)
		return nil
	})
	if err != nil {
		return err
	}
	body := AnthropicRequest(nodes)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(body)
}
