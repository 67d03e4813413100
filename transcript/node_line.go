// A node's nodes.jsonl line, written without reflection: the bytes of
// json.Compact over Node.MarshalJSON, which stays the reference (and the
// fallback for anything this encoder does not vouch for).

package transcript

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"
)

// AppendLine appends n as the store writes it on one line of nodes.jsonl
// (no newline): exactly json.Compact(n.MarshalJSON()), whose output is
// the format (docs/FORMAT.md §1). The common case is encoded directly;
// a node holding a raw value (arguments, metadata, unknown fields) that is
// not one valid JSON value is encoded through MarshalJSON, so its bytes
// or its error are the reference's. FuzzAppendLine holds both equal.
func AppendLine(dst []byte, n *Node) ([]byte, error) {
	if out, ok := appendNodeFast(dst, n); ok {
		return out, nil
	}
	return appendLineReference(dst, n)
}

// appendLineReference is the reference: Node.MarshalJSON, compacted.
func appendLineReference(dst []byte, n *Node) ([]byte, error) {
	raw, err := n.MarshalJSON()
	if err != nil {
		return dst, err
	}
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, raw); err != nil {
		return dst, err
	}
	return buf.Bytes(), nil
}

// lineWriter appends one JSON object's members; ok turns false at the
// first raw value that is not valid JSON on its own.
type lineWriter struct {
	b     []byte
	first bool
	ok    bool
	// html: inside Content's blocks, which the reference encodes with
	// json.Marshal, so <, >, & and U+2028/U+2029 are escaped there.
	html bool
}

func (w *lineWriter) open() {
	w.b = append(w.b, '{')
	w.first = true
}

func (w *lineWriter) close() { w.b = append(w.b, '}') }

// key writes a key that needs no escaping (a literal of this file).
func (w *lineWriter) key(k string) {
	if !w.first {
		w.b = append(w.b, ',')
	}
	w.first = false
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':')
}

func (w *lineWriter) str(k, v string, always bool) {
	if v == "" && !always {
		return
	}
	w.key(k)
	w.b = appendJSONString(w.b, v, w.html)
}

func (w *lineWriter) raw(k string, v []byte) {
	w.key(k)
	w.rawValue(v)
}

func (w *lineWriter) rawValue(v []byte) {
	var ok bool
	if w.b, ok = appendCompactRaw(w.b, v, w.html); !ok {
		w.ok = false
	}
}

// extra writes unknown members sorted by key, as objectWriter.extra.
func (w *lineWriter) extra(m map[string]json.RawMessage) {
	if len(m) == 0 {
		return
	}
	var small [8]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !w.first {
			w.b = append(w.b, ',')
		}
		w.first = false
		w.b = appendJSONString(w.b, k, w.html)
		w.b = append(w.b, ':')
		w.rawValue(m[k])
	}
}

func appendNodeFast(dst []byte, n *Node) ([]byte, bool) {
	w := lineWriter{b: dst, ok: true}
	w.open()
	w.str("id", n.ID, false)
	if n.Predecessor == "" {
		w.key("predecessor")
		w.b = append(w.b, "null"...)
	} else {
		w.str("predecessor", n.Predecessor, true)
	}
	w.str("role", string(n.Role), true)
	w.key("content")
	w.content(&n.Content)
	if len(n.ToolCalls) > 0 {
		w.key("tool_calls")
		w.b = append(w.b, '[')
		for i := range n.ToolCalls {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.toolCall(&n.ToolCalls[i])
		}
		w.b = append(w.b, ']')
	}
	w.str("tool_call_id", n.ToolCallID, false)
	w.str("name", n.Name, false)
	w.str("caller", n.Caller, false)
	w.str("created_at", n.CreatedAt, false)
	if n.Usage != nil {
		w.key("usage")
		w.usage(n.Usage)
	}
	if len(n.Metadata) > 0 {
		w.key("metadata")
		first := w.first
		w.open()
		w.extra(n.Metadata)
		w.close()
		w.first = first
	}
	w.extra(n.Extra)
	w.close()
	return w.b, w.ok
}

func (w *lineWriter) content(c *Content) {
	if !c.IsBlocks {
		w.b = appendJSONString(w.b, c.Text, false)
		return
	}
	w.b = append(w.b, '[')
	w.html = true
	for i := range c.Blocks {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.block(&c.Blocks[i])
	}
	w.html = false
	w.first = false
	w.b = append(w.b, ']')
}

func (w *lineWriter) block(b *Block) {
	w.open()
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
		w.key("is_error")
		w.b = append(w.b, "true"...)
	}
	w.extra(b.Extra)
	w.close()
}

func (w *lineWriter) toolCall(tc *ToolCall) {
	w.open()
	w.str("id", tc.ID, true)
	w.str("name", tc.Name, true)
	if len(tc.Arguments) > 0 {
		w.raw("arguments", tc.Arguments)
	}
	w.extra(tc.Extra)
	w.close()
	w.first = false
}

func (w *lineWriter) usage(u *Usage) {
	w.open()
	w.key("input_tokens")
	w.b = strconv.AppendInt(w.b, u.InputTokens, 10)
	w.key("output_tokens")
	w.b = strconv.AppendInt(w.b, u.OutputTokens, 10)
	if u.CachedInputTokens != 0 {
		w.key("cached_input_tokens")
		w.b = strconv.AppendInt(w.b, u.CachedInputTokens, 10)
	}
	w.extra(u.Extra)
	w.close()
	w.first = false
}

// safeByte[b]: an ASCII byte encoding/json writes as it is in a string
// (printable, not '"' or '\\'); htmlSafeByte also excludes <, > and &.
var safeByte, htmlSafeByte [utf8.RuneSelf]bool

func init() {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		safeByte[b] = b != '"' && b != '\\'
		htmlSafeByte[b] = safeByte[b] && b != '<' && b != '>' && b != '&'
	}
}

const hexDigits = "0123456789abcdef"

// appendJSONString is encoding/json's string encoding: control bytes as
// \b \f \n \r \t or \u00XX, invalid UTF-8 as \ufffd, U+2028 and U+2029
// escaped, and with html also <, > and & as \u003c, \u003e, \u0026.
func appendJSONString(dst []byte, s string, html bool) []byte {
	safe := &safeByte
	if html {
		safe = &htmlSafeByte
	}
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if !html {
			if i = plainRun(s, i); i >= len(s) {
				break
			}
		}
		b := s[i]
		if b < utf8.RuneSelf {
			if safe[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendCompactRaw appends a raw JSON value as json.Compact writes it
// (whitespace outside strings removed, nothing else changed) and, with
// html, as json.Marshal's compaction of a marshaler's output writes it
// (<, >, & and U+2028/U+2029 escaped). ok is false, and nothing appended,
// when raw is not one valid JSON value.
func appendCompactRaw(dst, raw []byte, html bool) ([]byte, bool) {
	if !ValidJSON(raw) {
		return dst, false
	}
	start, inString, escaped := 0, false, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			case html && (c == '<' || c == '>' || c == '&'):
				dst = append(dst, raw[start:i]...)
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
				start = i + 1
			case html && c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xA8:
				dst = append(dst, raw[start:i]...)
				dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[raw[i+2]&0xF])
				i += 2
				start = i + 1
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case ' ', '\t', '\n', '\r':
			dst = append(dst, raw[start:i]...)
			start = i + 1
		}
	}
	return append(dst, raw[start:]...), true
}
