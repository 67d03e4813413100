package setup

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// object is a JSON object that keeps its keys in file order and its values
// as they were written, so a merge changes only the keys it touches and
// every other value is written back byte for byte (docs/HOOKS.md,
// "Merge").
type object struct {
	keys []string
	vals map[string]*value
	// changed is set by any set or del: an object nothing changed is
	// written back as it was read.
	changed bool
}

// value is one JSON value as setup holds it: the bytes it was read with
// (written verbatim), bytes setup made (indented when written), or a
// container setup changed, written from its members so that those it did
// not change keep their bytes too.
type value struct {
	raw   json.RawMessage
	fresh bool
	obj   *object
	arr   []*value
	isArr bool
}

func newObject() *object { return &object{vals: map[string]*value{}} }

func kept(raw json.RawMessage) *value { return &value{raw: raw} }

// bytes is the value's JSON (containers encoded compactly).
func (v *value) bytes() json.RawMessage {
	switch {
	case v.obj != nil:
		return v.obj.raw()
	case v.isArr:
		var b bytes.Buffer
		b.WriteByte('[')
		for i, m := range v.arr {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(m.bytes())
		}
		b.WriteByte(']')
		return b.Bytes()
	}
	return v.raw
}

// parseObject reads one JSON object; anything else (or trailing data) is
// an error with the line it is on. Its values are slices of b, not copies:
// a 200 MB ~/.claude.json is held once.
func parseObject(b []byte) (*object, error) {
	// Unmarshalling into an empty struct checks the whole document (with
	// the offset of a syntax error) without building anything.
	if err := json.Unmarshal(b, &struct{}{}); err != nil {
		var te *json.UnmarshalTypeError
		if asType(err, &te) {
			return nil, &SyntaxError{Line: 1, Err: fmt.Errorf("expected a JSON object, found %s", te.Value)}
		}
		return nil, syntaxError(b, 0, err)
	}
	o := newObject()
	i := skipSpace(b, 0)
	if i == len(b) || b[i] != '{' {
		return nil, &SyntaxError{Line: 1 + bytes.Count(b[:i], []byte("\n")), Err: fmt.Errorf("expected a JSON object")}
	}
	i++
	for {
		i = skipSpace(b, i)
		if b[i] == '}' {
			return o, nil
		}
		if b[i] == ',' {
			i = skipSpace(b, i+1)
		}
		end := skipValue(b, i)
		var k string
		if err := json.Unmarshal(b[i:end], &k); err != nil {
			return nil, syntaxError(b, int64(i), err)
		}
		i = skipSpace(b, end)
		i = skipSpace(b, i+1) // past ':'
		end = skipValue(b, i)
		o.keys = append(o.keys, k)
		if _, dup := o.vals[k]; dup {
			o.keys = o.keys[:len(o.keys)-1] // the last one wins, as JSON.parse
		}
		o.vals[k] = kept(b[i:end:end])
		i = end
	}
}

func asType(err error, te **json.UnmarshalTypeError) bool {
	t, ok := err.(*json.UnmarshalTypeError)
	*te = t
	return ok
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue is the end of the valid JSON value starting at b[i].
func skipValue(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch c := b[i]; c {
		case '"':
			for i++; b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			i++
		case '{', '[':
			depth++
			i++
		case '}', ']':
			if depth == 0 {
				return i
			}
			depth--
			i++
		default:
			if depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r') {
				return i
			}
			i++
		}
		if depth == 0 && (b[i-1] == '"' || b[i-1] == '}' || b[i-1] == ']') {
			return i
		}
	}
	return i
}

// SyntaxError is a settings file that is not a JSON object.
type SyntaxError struct {
	Line int
	Err  error
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

func syntaxError(b []byte, off int64, err error) error {
	if se, ok := err.(*json.SyntaxError); ok {
		off = se.Offset
	}
	off = min(off, int64(len(b)))
	return &SyntaxError{Line: 1 + bytes.Count(b[:off], []byte("\n")), Err: err}
}

func (o *object) get(k string) (json.RawMessage, bool) {
	v, ok := o.vals[k]
	if !ok {
		return nil, false
	}
	return v.bytes(), true
}

// set stores a value setup made.
func (o *object) set(k string, raw json.RawMessage) { o.put(k, &value{raw: raw, fresh: true}) }

func (o *object) put(k string, v *value) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
	o.changed = true
}

func (o *object) del(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	o.changed = true
	for i, x := range o.keys {
		if x == k {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			break
		}
	}
}

// kind names what a JSON value is, for an error.
func kind(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "empty"
	}
	switch t[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

// child is the object under k: a new one when absent; ok false (and a
// new object) when the value is not an object.
func (o *object) child(k string) (*object, bool) {
	v, present := o.vals[k]
	if !present {
		return newObject(), true
	}
	if v.obj != nil {
		return v.obj, true
	}
	c, err := parseObject(v.bytes())
	if err != nil {
		return newObject(), false
	}
	return c, true
}

// raw encodes o compactly, values as they were.
func (o *object) raw() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(marshal(k))
		b.WriteByte(':')
		b.Write(o.vals[k].bytes())
	}
	b.WriteByte('}')
	return b.Bytes()
}

// marshal encodes v as JSON.stringify does: no HTML escaping.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimRight(b.Bytes(), "\n")
}

// format writes the document as Claude Code does (two-space indentation,
// JSON.stringify(v, null, 2)) where setup changed it, and every value it
// did not change with the bytes it was read with; the trailing newline as
// the original had it.
func format(o *object, newline bool, sizeHint int) []byte {
	var b bytes.Buffer
	b.Grow(sizeHint + 1024)
	writeValue(&b, &value{obj: o}, 0)
	if newline {
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func writeValue(b *bytes.Buffer, v *value, depth int) {
	pad := strings.Repeat("  ", depth)
	switch {
	case v.obj != nil:
		if len(v.obj.keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, k := range v.obj.keys {
			if i > 0 {
				b.WriteString(",\n")
			}
			b.WriteString(pad + "  ")
			b.Write(marshal(k))
			b.WriteString(": ")
			writeValue(b, v.obj.vals[k], depth+1)
		}
		b.WriteString("\n" + pad + "}")
	case v.isArr:
		if len(v.arr) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, m := range v.arr {
			if i > 0 {
				b.WriteString(",\n")
			}
			b.WriteString(pad + "  ")
			writeValue(b, m, depth+1)
		}
		b.WriteString("\n" + pad + "]")
	case v.fresh:
		if err := json.Indent(b, v.raw, pad, "  "); err != nil {
			b.Write(v.raw)
		}
	default:
		b.Write(v.raw)
	}
}

// array decodes a JSON array's members, kept as they were (ok false when
// the value is not an array).
func array(v json.RawMessage) ([]*value, bool) {
	var a []json.RawMessage
	if kind(v) != "an array" || json.Unmarshal(v, &a) != nil {
		return nil, false
	}
	out := make([]*value, len(a))
	for i, m := range a {
		out[i] = kept(m)
	}
	return out, true
}

func arrayValue(a []*value) *value { return &value{arr: a, isArr: true} }

// sameJSON reports whether the valid JSON documents a and b are the same,
// ignoring whitespace outside strings (key order counts), without copying
// either.
func sameJSON(a, b []byte) bool {
	i, j, inString, escaped := 0, 0, false, false
	for {
		if !inString {
			i, j = skipSpace(a, i), skipSpace(b, j)
		}
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		c := a[i]
		if c != b[j] {
			return false
		}
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		}
		i, j = i+1, j+1
	}
}
