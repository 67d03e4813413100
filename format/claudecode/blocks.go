package claudecode

// This file maps a Claude Code line's content blocks and usage to ctxfold's: the second pass's per-block conversion.

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// convertBlocks appends the ctxfold blocks of one line's content blocks
// to blocks, and the call ids of its refused tool results to unmatched.
func convertBlocks(bl []block, content json.RawMessage, accepted, seenCalls map[string]bool, blocks []transcript.Block, unmatched []string) ([]transcript.Block, []string) {
	var raws []json.RawMessage // read only for a block of unknown type
	for k, b := range bl {
		var raw json.RawMessage
		if !knownBlock[b.Type] {
			if raws == nil {
				_ = json.Unmarshal(content, &raws)
			}
			if k < len(raws) {
				raw = raws[k]
			}
		}
		out, um := convertBlock(b, raw, accepted, seenCalls)
		blocks = append(blocks, out...)
		unmatched = append(unmatched, um...)
	}
	return blocks, unmatched
}

// convertUsage maps the Messages API usage of an assistant message's last
// line (ref) to the node's usage; a usage of another shape is warned about
// (into warns) and yields nil.
func convertUsage(raw json.RawMessage, ref lineRef, warns *[]builtWarning) *transcript.Usage {
	var u usage
	if input.Unmarshal(raw, &u) != nil {
		*warns = append(*warns, builtWarning{ref, "usage is not the Messages API's usage object; not imported"})
		return nil
	}
	out := &transcript.Usage{
		InputTokens:       u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
		OutputTokens:      u.OutputTokens,
		CachedInputTokens: u.CacheReadInputTokens,
	}
	if u.CacheCreationInputTokens != 0 {
		out.Extra = map[string]json.RawMessage{"cache_creation_input_tokens": json.RawMessage(fmt.Sprint(u.CacheCreationInputTokens))}
	}
	return out
}

var knownBlock = map[string]bool{"text": true, "thinking": true, "redacted_thinking": true, "tool_use": true,
	"tool_result": true, "image": true, "document": true}

// convertBlock maps one Claude Code content block to ctxfold blocks. A
// tool_result the store would refuse (no open call on its chain) becomes
// text, and its call id is returned as unmatched.
func convertBlock(b block, raw json.RawMessage, accepted, seenCalls map[string]bool) ([]transcript.Block, []string) {
	switch b.Type {
	case "text":
		return []transcript.Block{{Type: transcript.BlockText, Text: b.Text}}, nil
	case "thinking":
		return []transcript.Block{{Type: transcript.BlockThinking, Text: b.Thinking, Signature: b.Signature}}, nil
	case "redacted_thinking":
		out := transcript.Block{Type: transcript.BlockThinking}
		if len(b.Data) > 0 {
			out.Extra = map[string]json.RawMessage{"redacted_data": b.Data}
		}
		return []transcript.Block{out}, nil
	case "tool_use":
		if b.ID == "" {
			return []transcript.Block{{Type: transcript.BlockText, Text: fmt.Sprintf("[tool call %s without an id]", b.Name)}}, nil
		}
		if seenCalls[b.ID] {
			return nil, nil
		}
		seenCalls[b.ID] = true
		args := b.Input
		if len(trimSpace(args)) == 0 {
			args = json.RawMessage("{}")
		}
		return []transcript.Block{{Type: transcript.BlockToolCall, ID: b.ID, Name: b.Name, Arguments: args}}, nil
	case "tool_result":
		text, images := resultContent(b.Content)
		if accepted[b.ToolUseID] {
			delete(accepted, b.ToolUseID)
			out := []transcript.Block{{Type: transcript.BlockToolResult, ToolCallID: b.ToolUseID, Text: text, IsError: b.IsError}}
			return append(out, images...), nil
		}
		out := []transcript.Block{{Type: transcript.BlockText, Text: fmt.Sprintf("[tool result for %q, which has no open call here]\n%s", b.ToolUseID, text)}}
		return append(out, images...), []string{b.ToolUseID}
	case "image":
		return []transcript.Block{imageBlock(transcript.BlockImage, b.Source)}, nil
	case "document":
		return []transcript.Block{imageBlock("document", b.Source)}, nil
	}
	// Unknown block: kept by type, with its fields when they are small.
	t := b.Type
	if t == "" {
		t = "unknown"
	}
	out := transcript.Block{Type: t}
	if len(raw) <= 4096 {
		out.Extra = map[string]json.RawMessage{"claude_code": raw}
	}
	return []transcript.Block{out}, nil
}

// resultContent reads a tool_result's content: a string, or blocks whose
// text is joined and whose images become references.
func resultContent(v any) (string, []transcript.Block) {
	switch c := v.(type) {
	case nil:
		return "", nil
	case string:
		return c, nil
	case []any:
		var texts []string
		var images []transcript.Block
		for _, e := range c {
			m, _ := e.(map[string]any)
			switch t, _ := m["type"].(string); t {
			case "text":
				s, _ := m["text"].(string)
				texts = append(texts, s)
			case "image", "document":
				typ := transcript.BlockImage
				if t == "document" {
					typ = "document"
				}
				images = append(images, imageBlock(typ, sourceOf(m["source"])))
			default:
				if enc, err := json.Marshal(e); err == nil {
					texts = append(texts, string(enc))
				}
			}
		}
		return strings.Join(texts, "\n"), images
	}
	enc, _ := json.Marshal(v)
	return string(enc), nil
}

func sourceOf(v any) *source {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	str := func(k string) string { s, _ := m[k].(string); return s }
	return &source{Type: str("type"), MediaType: str("media_type"), Data: str("data"), URL: str("url"), FileID: str("file_id")}
}

// imageBlock references an image by URL, file id, or the sha256 digest
// and size of its bytes: a session never holds the bytes themselves.
func imageBlock(typ string, src *source) transcript.Block {
	b := transcript.Block{Type: typ}
	if src == nil {
		b.Source = "unknown"
		return b
	}
	b.MediaType = src.MediaType
	switch {
	case src.URL != "":
		b.Source = src.URL
	case src.FileID != "":
		b.Source = "file:" + src.FileID
	default:
		data, err := base64.StdEncoding.DecodeString(src.Data)
		if err != nil {
			data = []byte(src.Data)
		}
		sum := sha256.Sum256(data)
		b.Source = "sha256:" + hex.EncodeToString(sum[:])
		b.Extra = map[string]json.RawMessage{"bytes": json.RawMessage(fmt.Sprint(len(data)))}
	}
	return b
}
