package transcript

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// One rule for invalid UTF-8 everywhere (docs/FORMAT.md §7): it is an
// error naming the file, the line and the byte, never replaced with
// U+FFFD in silence — nodes.jsonl, events.jsonl, an append batch, a
// node given on the command line and every import format alike.

// FirstInvalidUTF8 returns the 1-based position of the first byte of b
// that is not valid UTF-8, or 0 when b is valid.
func FirstInvalidUTF8(b []byte) int {
	if utf8.Valid(b) {
		return 0
	}
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i + 1
		}
		i += size
	}
	return 0
}

// InvalidUTF8Msg is the message for invalid UTF-8 at 1-based byte pos of
// a line.
func InvalidUTF8Msg(pos int) string {
	return fmt.Sprintf("invalid UTF-8 at byte %d", pos)
}

// invalidUTF8Field names the first field of n that holds invalid UTF-8,
// or "". Encoding would replace such bytes with U+FFFD. A block's strings
// (and a tool call's id and name) are judged joined, as they always were:
// each is checked alone first, and only a block with an invalid one is
// joined (so the common case copies nothing).
func InvalidUTF8Field(n *Node) string {
	for i := range n.Content.Blocks {
		if b := &n.Content.Blocks[i]; !utf8.Valid(b.Arguments) || !rawValid(b.Extra) {
			return "content"
		}
	}
	for i := range n.ToolCalls {
		if c := &n.ToolCalls[i]; !utf8.Valid(c.Arguments) || !rawValid(c.Extra) {
			return "tool_calls"
		}
	}
	for _, s := range [...]struct{ name, v string }{{"id", n.ID}, {"predecessor", n.Predecessor}, {"caller", n.Caller}, {"name", n.Name},
		{"tool_call_id", n.ToolCallID}, {"created_at", n.CreatedAt}, {"content", n.Content.Text}} {
		if !utf8.ValidString(s.v) {
			return s.name
		}
	}
	for i := range n.Content.Blocks {
		b := &n.Content.Blocks[i]
		if !validJoined(b.Text, b.Signature, b.Source, b.MediaType, b.ID, b.Name, b.ToolCallID) {
			return "content"
		}
	}
	for i := range n.ToolCalls {
		if !validJoined(n.ToolCalls[i].ID, n.ToolCalls[i].Name) {
			return "tool_calls"
		}
	}
	if !rawValid(n.Metadata) {
		return "metadata"
	}
	if !rawValid(n.Extra) {
		return "a field this version does not know"
	}
	if n.Usage != nil && !rawValid(n.Usage.Extra) {
		return "usage"
	}
	return ""
}

// validJoined: the strings joined are valid UTF-8.
func validJoined(parts ...string) bool {
	for _, p := range parts {
		if !utf8.ValidString(p) {
			return utf8.ValidString(strings.Join(parts, ""))
		}
	}
	return true
}

func rawValid(m map[string]json.RawMessage) bool {
	for k, v := range m {
		if !utf8.ValidString(k) || !utf8.Valid(v) {
			return false
		}
	}
	return true
}
