package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Role is who speaks a node. The four values are the public format; a summary
// node carries RoleUser (see SummaryRole).
type Role string

const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Valid reports whether r is one of the four roles of the format.
func (r Role) Valid() bool {
	switch r {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool:
		return true
	}
	return false
}

// Block types inside a node's content array.
const (
	BlockText       = "text"
	BlockThinking   = "thinking"
	BlockImage      = "image"
	BlockToolCall   = "tool_call"
	BlockToolResult = "tool_result"
)

// Block is one typed piece of content. Text-bearing blocks (text, thinking,
// tool_result) keep their text in Text; unknown fields survive a round trip
// in Extra.
type Block struct {
	Type string
	Text string
	// Signature is the provider's opaque signature of a thinking block.
	Signature string
	// Image reference: where the bytes live (path, URL or digest), never the bytes.
	Source    string
	MediaType string
	// Tool call.
	ID        string
	Name      string
	Arguments json.RawMessage
	// Tool result.
	ToolCallID string
	IsError    bool
	Extra      map[string]json.RawMessage
}

var blockKnown = []string{"type", "text", "signature", "source", "media_type", "id", "name", "arguments", "tool_call_id", "is_error"}

func (b Block) MarshalJSON() ([]byte, error) {
	w := newObjectWriter()
	w.str("type", b.Type, true)
	w.str("text", b.Text, false)
	w.str("signature", b.Signature, false)
	w.str("source", b.Source, false)
	w.str("media_type", b.MediaType, false)
	w.str("id", b.ID, false)
	w.str("name", b.Name, false)
	if len(b.Arguments) > 0 {
		w.raw("arguments", b.Arguments)
	}
	w.str("tool_call_id", b.ToolCallID, false)
	if b.IsError {
		w.raw("is_error", []byte("true"))
	}
	w.extra(b.Extra)
	return w.close(), w.err
}

func (b *Block) UnmarshalJSON(data []byte) error { return b.decode(data, false) }

// decode is UnmarshalJSON; valid: data is part of a value already
// validated (a node's line), so it is not checked again.
func (b *Block) decode(data []byte, valid bool) error {
	var buf [12]member
	m, err := membersOf(data, buf[:0], valid)
	if err != nil {
		return fmt.Errorf("content block: expected an object: %w", err)
	}
	*b = Block{}
	fields := []struct {
		key string
		dst *string
	}{{"type", &b.Type}, {"text", &b.Text}, {"signature", &b.Signature}, {"source", &b.Source},
		{"media_type", &b.MediaType}, {"id", &b.ID}, {"name", &b.Name}, {"tool_call_id", &b.ToolCallID}}
	for _, f := range fields {
		if err := takeString(m, f.key, f.dst); err != nil {
			return fmt.Errorf("content block: %w", err)
		}
	}
	if raw, ok := m.get("arguments"); ok {
		b.Arguments = append(json.RawMessage(nil), raw...)
	}
	if raw, ok := m.get("is_error"); ok {
		if err := json.Unmarshal(raw, &b.IsError); err != nil {
			return fmt.Errorf("content block: is_error: expected a boolean")
		}
	}
	if b.Type == "" {
		return fmt.Errorf("content block: missing \"type\"")
	}
	b.Extra = leftovers(m, blockKnown)
	return nil
}

// Content is a node's content: either a plain string or a list of typed
// blocks. Which form was read is remembered so a round trip is faithful.
type Content struct {
	Text     string
	Blocks   []Block
	IsBlocks bool
}

// TextContent returns string content.
func TextContent(s string) Content { return Content{Text: s} }

func (c Content) MarshalJSON() ([]byte, error) {
	if c.IsBlocks {
		if c.Blocks == nil {
			return []byte("[]"), nil
		}
		return json.Marshal(c.Blocks)
	}
	return marshalString(c.Text), nil
}

func (c *Content) UnmarshalJSON(data []byte) error { return c.decode(data, false) }

// decode is UnmarshalJSON; valid as for Block.decode.
func (c *Content) decode(data []byte, valid bool) error {
	*c = Content{}
	data = bytes.TrimSpace(data)
	switch {
	case len(data) == 0 || bytes.Equal(data, []byte("null")):
		return nil
	case data[0] == '"':
		return unmarshalString(data, &c.Text)
	case data[0] == '[':
		c.IsBlocks = true
		var err error
		c.Blocks, err = decodeElements(data, valid, (*Block).decode)
		return err
	}
	return fmt.Errorf("content: expected a string or an array of blocks")
}

// PlainText joins the text of text blocks (or returns the string content).
// Thinking, tool calls, tool results and images are not included.
func (c Content) PlainText() string {
	if !c.IsBlocks {
		return c.Text
	}
	var parts []string
	for _, b := range c.Blocks {
		if b.Type == BlockText {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// ToolCall is a call an assistant node makes. Arguments is any JSON value:
// OpenAI exports keep a JSON-encoded string, Anthropic ones an object.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Extra keeps fields this version does not know (a round trip keeps them).
	Extra map[string]json.RawMessage `json:"-"`
}

func (tc ToolCall) MarshalJSON() ([]byte, error) {
	w := newObjectWriter()
	w.str("id", tc.ID, true)
	w.str("name", tc.Name, true)
	if len(tc.Arguments) > 0 {
		w.raw("arguments", tc.Arguments)
	}
	w.extra(tc.Extra)
	return w.close(), w.err
}

func (tc *ToolCall) UnmarshalJSON(data []byte) error { return tc.decode(data, false) }

// decode is UnmarshalJSON; valid as for Block.decode.
func (tc *ToolCall) decode(data []byte, valid bool) error {
	var buf [8]member
	m, err := membersOf(data, buf[:0], valid)
	if err != nil {
		return fmt.Errorf("tool call: expected an object")
	}
	*tc = ToolCall{}
	if err := takeString(m, "id", &tc.ID); err != nil {
		return fmt.Errorf("tool call: %w", err)
	}
	if err := takeString(m, "name", &tc.Name); err != nil {
		return fmt.Errorf("tool call: %w", err)
	}
	if raw, ok := m.get("arguments"); ok && string(raw) != "null" {
		tc.Arguments = append(json.RawMessage(nil), raw...)
	}
	tc.Extra = leftovers(m, []string{"id", "name", "arguments"})
	return nil
}

// ArgumentsText returns the arguments as the JSON text a provider receives
// in a Chat Completions tool call (a string value is unquoted).
func (tc ToolCall) ArgumentsText() string { return ArgumentsText(tc.Arguments) }

// ArgumentsObject is the call's arguments as a JSON object (a string of
// one, as Codex records them, unquoted first); nil when they are none.
func (tc ToolCall) ArgumentsObject() map[string]any {
	var args map[string]any
	if json.Unmarshal([]byte(tc.ArgumentsText()), &args) != nil {
		return nil
	}
	return args
}

// ArgumentsText unquotes a JSON string value; any other JSON is returned as is.
func ArgumentsText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "{}"
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return string(raw)
}

// Usage is what the provider reported for the request that produced an
// assistant node.
type Usage struct {
	InputTokens       int64                      `json:"input_tokens"`
	OutputTokens      int64                      `json:"output_tokens"`
	CachedInputTokens int64                      `json:"cached_input_tokens,omitempty"`
	Extra             map[string]json.RawMessage `json:"-"`
}

func (u Usage) MarshalJSON() ([]byte, error) {
	w := newObjectWriter()
	w.raw("input_tokens", []byte(fmt.Sprint(u.InputTokens)))
	w.raw("output_tokens", []byte(fmt.Sprint(u.OutputTokens)))
	if u.CachedInputTokens != 0 {
		w.raw("cached_input_tokens", []byte(fmt.Sprint(u.CachedInputTokens)))
	}
	w.extra(u.Extra)
	return w.close(), w.err
}

func (u *Usage) UnmarshalJSON(data []byte) error {
	var buf [8]member
	m, err := decodeMembers(data, buf[:0])
	if err != nil {
		return fmt.Errorf("usage: expected an object")
	}
	*u = Usage{}
	for _, f := range [...]struct {
		key string
		dst *int64
	}{{"input_tokens", &u.InputTokens}, {"output_tokens", &u.OutputTokens}, {"cached_input_tokens", &u.CachedInputTokens}} {
		raw, ok := m.get(f.key)
		if !ok || string(raw) == "null" {
			continue
		}
		// Plain digits (the common case) without a second JSON parse.
		if v, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			*f.dst = v
			continue
		}
		if err := json.Unmarshal(raw, f.dst); err != nil {
			return fmt.Errorf("usage: %s: expected an integer", f.key)
		}
	}
	u.Extra = leftovers(m, []string{"input_tokens", "output_tokens", "cached_input_tokens"})
	return nil
}

// UsageContextWindow is the Usage.Extra key of the context window the
// client measured the request against, where its transcript records one
// (Codex: token_count.info.model_context_window). It beats the model table.
const UsageContextWindow = "context_window"

// ContextWindow returns the recorded context window, 0 when none is.
func (u Usage) ContextWindow() int64 {
	var w int64
	if raw, ok := u.Extra[UsageContextWindow]; ok && json.Unmarshal(raw, &w) == nil && w > 0 {
		return w
	}
	return 0
}

// Extra keys of a thinking block imported from an OpenAI reasoning item
// (Codex): the opaque encrypted_content the provider returned, and the byte
// lengths of the summary and content parts joined in Text by "\n\n".
// render --format responses sends such a block back as a reasoning item.
const (
	ExtraEncryptedContent = "encrypted_content"
	ExtraSummaryLengths   = "summary_lengths"
	ExtraContentLengths   = "content_lengths"
)

// ExtraNamespace is the ToolCall.Extra key of the namespace of a
// namespaced tool (OpenAI Responses API, Codex's multi_agent_v1); render
// --format responses sends it with the call.
const ExtraNamespace = "namespace"

// ExtraCustom is the ToolCall.Extra key (true) of a custom (freeform)
// tool call, OpenAI Responses API custom_tool_call such as Codex's
// apply_patch: its arguments are a JSON string holding the raw input.
const ExtraCustom = "custom"

// MetaResponsesInput is the metadata key of a summary node imported from a
// client's own compaction: the Responses API input items the client sent in
// place of the covered turns, which render --format responses emits as they
// are (the node's text content is the same items as text, for every other
// format and for estimate).
const MetaResponsesInput = "responses_input"

// MetaGeminiContents is the metadata key of a summary node imported from
// Gemini CLI's own compression: the Gemini contents the client sent in
// place of the compressed turns (its <state_snapshot> and the model's
// acknowledgement), which render --format gemini emits as they are.
const MetaGeminiContents = "gemini_contents"

// MetaOpenAIMessages is the metadata key of a summary node imported from a
// client's own compaction that sends it as Chat Completions messages
// (OpenCode's "What did we do so far?" and the summary as the assistant's
// answer), which render --format openai emits as they are.
const MetaOpenAIMessages = "openai_messages"

// Node is one line of nodes.jsonl. Field names are the public format
// (docs/FORMAT.md). Fields this version does not know survive a
// read/write round trip in Extra.
type Node struct {
	ID string
	// Predecessor is "" for a root (written as null).
	Predecessor string
	Role        Role
	Content     Content
	ToolCalls   []ToolCall
	ToolCallID  string
	Name        string
	// Caller is the node whose turn spawned this one (a sub-agent or side chain).
	Caller    string
	CreatedAt string
	Usage     *Usage
	Metadata  map[string]json.RawMessage
	Extra     map[string]json.RawMessage
}

var nodeKnown = []string{"id", "predecessor", "role", "content", "tool_calls", "tool_call_id", "name", "caller", "created_at", "usage", "metadata"}

func (n Node) MarshalJSON() ([]byte, error) {
	w := newObjectWriter()
	// A node to append may still lack its id (generated at append time).
	w.str("id", n.ID, false)
	if n.Predecessor == "" {
		w.raw("predecessor", []byte("null"))
	} else {
		w.str("predecessor", n.Predecessor, true)
	}
	w.str("role", string(n.Role), true)
	content, err := n.Content.MarshalJSON()
	if err != nil {
		return nil, err
	}
	w.raw("content", content)
	if len(n.ToolCalls) > 0 {
		w.value("tool_calls", n.ToolCalls)
	}
	w.str("tool_call_id", n.ToolCallID, false)
	w.str("name", n.Name, false)
	w.str("caller", n.Caller, false)
	w.str("created_at", n.CreatedAt, false)
	if n.Usage != nil {
		w.value("usage", n.Usage)
	}
	if len(n.Metadata) > 0 {
		w.value("metadata", sortedRaw(n.Metadata))
	}
	w.extra(n.Extra)
	return w.close(), w.err
}

func (n *Node) UnmarshalJSON(data []byte) error {
	if string(bytes.TrimSpace(data)) == "null" {
		// encoding/json hands null to an unmarshaler as is; without this a
		// null line reads as a node with every field empty.
		return errors.New("expected a JSON object, got null")
	}
	var buf [16]member
	m, err := decodeMembers(data, buf[:0])
	if err != nil {
		return fmt.Errorf("%s", jsonErrorText(err))
	}
	*n = Node{}
	// A missing id is allowed here (a batch to append may leave ids to be
	// generated); the session index requires one.
	if rawID, ok := m.get("id"); ok {
		if err := unmarshalString(rawID, &n.ID); err != nil || n.ID == "" {
			return fmt.Errorf("\"id\" must be a non-empty string")
		}
	}
	if raw, ok := m.get("predecessor"); ok && string(raw) != "null" {
		if err := unmarshalString(raw, &n.Predecessor); err != nil || n.Predecessor == "" {
			return fmt.Errorf("node %q: \"predecessor\" must be a non-empty string or null", n.ID)
		}
	}
	var role string
	if err := takeString(m, "role", &role); err != nil {
		return fmt.Errorf("node %q: %w", n.ID, err)
	}
	n.Role = Role(role)
	if !n.Role.Valid() {
		return fmt.Errorf("node %q: \"role\" must be system, user, assistant or tool, got %q", n.ID, role)
	}
	if raw, ok := m.get("content"); ok {
		// The line was validated whole (decodeMembers): its parts are not
		// checked again.
		if err := n.Content.decode(raw, true); err != nil {
			return fmt.Errorf("node %q: %w", n.ID, err)
		}
	}
	if raw, ok := m.get("tool_calls"); ok && string(raw) != "null" {
		var err error
		if n.ToolCalls, err = decodeElements(raw, true, (*ToolCall).decode); err != nil {
			return fmt.Errorf("node %q: \"tool_calls\" must be an array of {id, name, arguments}", n.ID)
		}
	}
	for _, f := range [...]struct {
		key string
		dst *string
	}{{"tool_call_id", &n.ToolCallID}, {"name", &n.Name}, {"caller", &n.Caller}, {"created_at", &n.CreatedAt}} {
		if err := takeString(m, f.key, f.dst); err != nil {
			return fmt.Errorf("node %q: %w", n.ID, err)
		}
	}
	if raw, ok := m.get("usage"); ok && string(raw) != "null" {
		n.Usage = new(Usage)
		if err := n.Usage.UnmarshalJSON(raw); err != nil {
			return fmt.Errorf("node %q: %w", n.ID, err)
		}
	}
	if raw, ok := m.get("metadata"); ok && string(raw) != "null" {
		if n.Metadata, err = metadataOf(raw); err != nil {
			return fmt.Errorf("node %q: \"metadata\" must be an object", n.ID)
		}
	}
	n.Extra = leftovers(m, nodeKnown)
	return nil
}

// metadataOf decodes a validated metadata value as json.Unmarshal into a
// map[string]json.RawMessage does (FuzzDecodeObject holds decodeMembers
// to that), the values copied out of the line.
func metadataOf(raw []byte) (map[string]json.RawMessage, error) {
	var buf [8]member
	ms, err := splitMembers(raw, buf[:0])
	if err != nil || ms == nil {
		return nil, err
	}
	m := make(map[string]json.RawMessage, len(ms))
	for _, x := range ms {
		m[x.key] = append(json.RawMessage(nil), x.val...)
	}
	return m, nil
}

// AllToolCalls returns the calls of the tool_calls field followed by those
// written as tool_call content blocks.
func (n *Node) AllToolCalls() []ToolCall {
	calls := append([]ToolCall(nil), n.ToolCalls...)
	if n.Content.IsBlocks {
		for _, b := range n.Content.Blocks {
			if b.Type == BlockToolCall {
				calls = append(calls, ToolCall{ID: b.ID, Name: b.Name, Arguments: b.Arguments})
			}
		}
	}
	return calls
}

// ToolResult is one result a node carries: a tool node's whole content, or a
// tool_result block.
type ToolResult struct {
	ToolCallID string
	Text       string
	IsError    bool
}

// ToolResults returns the results this node carries.
func (n *Node) ToolResults() []ToolResult {
	var out []ToolResult
	if n.Role == RoleTool && n.ToolCallID != "" {
		out = append(out, ToolResult{ToolCallID: n.ToolCallID, Text: n.Content.PlainText(), IsError: metaBool(n.Metadata, "is_error")})
	}
	if n.Content.IsBlocks {
		for _, b := range n.Content.Blocks {
			if b.Type == BlockToolResult {
				out = append(out, ToolResult{ToolCallID: b.ToolCallID, Text: b.Text, IsError: b.IsError})
			}
		}
	}
	return out
}

// IsSummary reports whether the node is a compaction summary (docs/FORMAT.md §4:
// metadata.compaction is true).
func (n *Node) IsSummary() bool { return metaBool(n.Metadata, "compaction") }

// IsTurnStart reports whether a turn begins at n: a user message that is
// not a summary and answers no tool call (docs/COMPACT.md, turn selection).
func (n *Node) IsTurnStart() bool {
	return n.Role == RoleUser && !n.IsSummary() && len(n.ToolResults()) == 0
}

// CoversIDs returns metadata.covers_ids, or nil.
func (n *Node) CoversIDs() []string {
	raw, ok := n.Metadata["covers_ids"]
	if !ok {
		return nil
	}
	if ids, ok := plainStrings(raw); ok {
		return ids
	}
	var ids []string
	if json.Unmarshal(raw, &ids) != nil {
		return nil
	}
	return ids
}

// SetMeta sets one metadata key to the JSON encoding of v.
func (n *Node) SetMeta(key string, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("transcript: metadata %q is not JSON-encodable: %v", key, err))
	}
	raw := json.RawMessage(bytes.TrimRight(buf.Bytes(), "\n"))
	if n.Metadata == nil {
		n.Metadata = map[string]json.RawMessage{}
	}
	n.Metadata[key] = raw
}

func metaBool(m map[string]json.RawMessage, key string) bool {
	raw, ok := m[key]
	return ok && string(bytes.TrimSpace(raw)) == "true"
}
