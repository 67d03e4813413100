package claudecode

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ctxfold/ctxfold/transcript"
)

// fullRecord is a line as the second pass reads it.
type fullRecord struct {
	record
	Timestamp         string          `json:"timestamp"`
	IsMeta            bool            `json:"isMeta"`
	IsAPIErrorMessage bool            `json:"isApiErrorMessage"`
	Content           json.RawMessage `json:"content"`
	CompactMetadata   json.RawMessage `json:"compactMetadata"`
}

// ccMeta is what a node keeps of Claude Code's own fields, under
// metadata.claude_code.
type ccMeta struct {
	UUIDs           []string        `json:"uuids,omitempty"`
	MessageID       string          `json:"message_id,omitempty"`
	RequestID       string          `json:"request_id,omitempty"`
	Model           string          `json:"model,omitempty"`
	StopReason      string          `json:"stop_reason,omitempty"`
	IsMeta          bool            `json:"is_meta,omitempty"`
	IsSidechain     bool            `json:"is_sidechain,omitempty"`
	AgentID         string          `json:"agent_id,omitempty"`
	APIError        bool            `json:"api_error,omitempty"`
	Unmatched       []string        `json:"unmatched_tool_results,omitempty"`
	BoundaryUUID    string          `json:"boundary_uuid,omitempty"`
	SummaryUUID     string          `json:"summary_uuid,omitempty"`
	CompactMetadata json.RawMessage `json:"compact_metadata,omitempty"`
}

// usage is Claude Code's (the Messages API's) usage object.
type usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
}

// emit builds each planned node from its lines and hands it to the sink,
// in plan order: a node is planned only after its predecessor and caller.
func (p *planner) emit() error {
	for i, n := range p.nodes {
		if i%1024 == 0 {
			if err := p.ctx.Err(); err != nil {
				return err
			}
		}
		var node transcript.Node
		var err error
		if n.kind == kindSummary {
			node, err = p.buildSummary(n)
		} else {
			node, err = p.buildMessage(n)
		}
		if err != nil {
			return err
		}
		if err := p.sink.Node(node); err != nil {
			ref := n.first
			return fmt.Errorf("%s:%d: %w", p.files[ref.file], ref.line, err)
		}
	}
	if p.model != "" {
		p.sink.SetModel(p.model)
	}
	if p.head >= 0 {
		p.sink.SetHead(p.nodes[p.head].id)
	}
	return nil
}

// read decodes one line again; a line whose message is needed must have
// a readable one (the first pass checked it).
func (p *planner) read(ref lineRef, r *fullRecord, needMessage bool) error {
	buf := make([]byte, ref.n)
	if _, err := p.open[ref.file].ReadAt(buf, ref.off); err != nil {
		return p.errorf(ref, "re-read: %v", err)
	}
	if err := decodeRecord(buf, r, &r.badMessage); err != nil {
		return p.errorf(ref, "expected a Claude Code record: %s", jsonErrorText(err))
	}
	if needMessage && (r.Message == nil || r.badMessage != "") {
		return p.errorf(ref, "expected a message object")
	}
	return nil
}

func (p *planner) idOf(i int32) string {
	if i < 0 {
		return ""
	}
	return p.nodes[i].id
}

func (p *planner) buildMessage(n *pnode) (transcript.Node, error) {
	node := transcript.Node{ID: n.id, Role: n.role(), Predecessor: p.idOf(n.pred), Caller: p.idOf(n.caller)}
	meta := ccMeta{IsSidechain: n.sidechain}
	accepted := map[string]bool{}
	for _, id := range n.results {
		accepted[id] = true
	}
	seenCalls := map[string]bool{}
	var blocks []transcript.Block
	var lastUsage json.RawMessage
	lines := n.lines()
	single := len(lines) == 1
	useBlocks := !single
	for k, ref := range lines {
		var r fullRecord
		if err := p.read(ref, &r, true); err != nil {
			return node, err
		}
		m := r.Message
		if k == 0 {
			node.CreatedAt = r.Timestamp
			meta.MessageID, meta.RequestID, meta.AgentID = m.ID, r.RequestID, r.AgentID
			meta.IsMeta = r.IsMeta
		}
		if !single {
			meta.UUIDs = append(meta.UUIDs, r.UUID)
		}
		if m.Model != "" {
			meta.Model = m.Model
		}
		if m.StopReason != "" {
			meta.StopReason = m.StopReason
		}
		meta.APIError = meta.APIError || r.IsAPIErrorMessage
		if len(trimSpace(m.Usage)) > 0 && string(trimSpace(m.Usage)) != "null" {
			lastUsage = m.Usage
		}
		text, bl, isBlocks, err := decodeContent[block](m.Content)
		if err != nil {
			return node, p.errorf(ref, "%s", jsonErrorText(err))
		}
		if !isBlocks {
			if single {
				node.Content = transcript.TextContent(text)
				continue
			}
			if text != "" {
				blocks = append(blocks, transcript.Block{Type: transcript.BlockText, Text: text})
			}
			continue
		}
		useBlocks = true
		var raws []json.RawMessage // read only for a block of unknown type
		for k, b := range bl {
			var raw json.RawMessage
			if !knownBlock[b.Type] {
				if raws == nil {
					_ = json.Unmarshal(m.Content, &raws)
				}
				if k < len(raws) {
					raw = raws[k]
				}
			}
			out, unmatched := convertBlock(b, raw, accepted, seenCalls)
			blocks = append(blocks, out...)
			meta.Unmatched = append(meta.Unmatched, unmatched...)
		}
	}
	if useBlocks {
		node.Content = transcript.Content{Blocks: blocks, IsBlocks: true}
	}
	if n.kind == kindAssistant && lastUsage != nil {
		var u usage
		if json.Unmarshal(lastUsage, &u) == nil {
			node.Usage = &transcript.Usage{
				InputTokens:       u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
				OutputTokens:      u.OutputTokens,
				CachedInputTokens: u.CacheReadInputTokens,
			}
			if u.CacheCreationInputTokens != 0 {
				node.Usage.Extra = map[string]json.RawMessage{"cache_creation_input_tokens": json.RawMessage(fmt.Sprint(u.CacheCreationInputTokens))}
			}
		} else {
			ref := lines[len(lines)-1]
			p.warnf(ref, "usage is not the Messages API's usage object; not imported")
		}
	}
	if n.kind != kindAssistant {
		meta.Model, meta.StopReason = "", ""
	}
	node.SetMeta("claude_code", meta)
	return node, nil
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

// buildSummary builds the summary node of a compaction (seed §2).
func (p *planner) buildSummary(n *pnode) (transcript.Node, error) {
	var r fullRecord
	if err := p.read(n.first, &r, false); err != nil {
		return transcript.Node{}, err
	}
	meta := ccMeta{BoundaryUUID: r.UUID, CompactMetadata: r.CompactMetadata}
	var text string
	if n.sum.text.line > 0 {
		var s fullRecord
		if err := p.read(n.sum.text, &s, true); err != nil {
			return transcript.Node{}, err
		}
		meta.SummaryUUID = s.UUID
		m := s.Message
		t, blocks, _, err := decodeContent[scanBlock](m.Content)
		if err != nil {
			return transcript.Node{}, p.errorf(n.sum.text, "%s", jsonErrorText(err))
		}
		var parts []string
		if t != "" {
			parts = append(parts, t)
		}
		for _, b := range blocks {
			if b.Type == "text" {
				parts = append(parts, b.Text)
			}
		}
		text = strings.Join(parts, "\n")
	} else {
		var c string
		_ = json.Unmarshal(r.Content, &c)
		text = strings.TrimSpace(c + " (Claude Code's summary text is not in the file)")
		p.warnf(n.first, "compaction boundary without its summary text")
	}
	spine := p.spine(n.sum.last)
	covers := make([]string, len(spine))
	for i, c := range spine {
		covers[i] = p.nodes[c].id
	}
	node := transcript.Node{ID: n.id, Role: transcript.SummaryRole, Name: transcript.SummaryName,
		Predecessor: p.idOf(n.pred), CreatedAt: r.Timestamp,
		Content: transcript.TextContent(transcript.SummaryPrefix + text)}
	node.SetMeta("compaction", true)
	node.SetMeta("covers_ids", covers)
	node.SetMeta("claude_code", meta)
	return node, nil
}
