package input

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ctxfold/ctxfold/transcript"
)

// AnthropicBlock is one content block of the Anthropic Messages format, as
// request bodies and the transcripts that store them (Cline) hold it.
type AnthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	Source    *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
		URL       string `json:"url"`
	} `json:"source"`
}

// Block converts b into a node's block: text, thinking (redacted kept
// opaque), images and documents as references, tool_use as a call,
// tool_result as a result. A type this version does not know becomes a
// text notice that keeps the original under metadata key unknownKey.
func (b AnthropicBlock) Block(unknownKey string) (transcript.Block, error) {
	switch b.Type {
	case "text":
		return transcript.Block{Type: transcript.BlockText, Text: b.Text}, nil
	case "thinking":
		return transcript.Block{Type: transcript.BlockThinking, Text: b.Thinking, Signature: b.Signature}, nil
	case "redacted_thinking":
		return transcript.Block{Type: transcript.BlockThinking, Extra: map[string]json.RawMessage{"redacted_data": Raw(b.Data)}}, nil
	case "image", "document":
		if b.Source == nil {
			return transcript.Block{}, fmt.Errorf("%s block without a source", b.Type)
		}
		img := Image(b.Source.URL, b.Source.MediaType, b.Source.Data)
		if b.Type == "document" {
			img.Extra = map[string]json.RawMessage{"anthropic_type": Raw("document")}
		}
		return img, nil
	case "tool_use":
		if b.ID == "" {
			return transcript.Block{}, errors.New("tool_use without an id")
		}
		args := b.Input
		if len(bytes.TrimSpace(args)) == 0 {
			args = json.RawMessage("{}")
		}
		return transcript.Block{Type: transcript.BlockToolCall, ID: b.ID, Name: b.Name, Arguments: args}, nil
	case "tool_result":
		return transcript.Block{Type: transcript.BlockToolResult, ToolCallID: b.ToolUseID, Text: AnthropicResultText(b.Content), IsError: b.IsError}, nil
	}
	raw, _ := json.Marshal(b)
	return transcript.Block{Type: transcript.BlockText, Text: "[" + b.Type + "]",
		Extra: map[string]json.RawMessage{unknownKey: raw}}, nil
}

// AnthropicResultText is a tool_result's content as text: a string as is,
// blocks joined with their non-text parts named.
func AnthropicResultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []AnthropicBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return Text(raw)
	}
	var texts []string
	for _, b := range blocks {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		} else {
			texts = append(texts, "["+b.Type+"]")
		}
	}
	return strings.Join(texts, "\n")
}
