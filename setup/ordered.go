package setup

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// object is a JSON object that keeps its keys in file order and its values
// as they were written, so a merge changes only the keys it touches.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

func newObject() *object { return &object{vals: map[string]json.RawMessage{}} }

// parseObject decodes one JSON object; anything else (or trailing data) is
// an error with the line it is on.
func parseObject(b []byte) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	o := newObject()
	tok, err := dec.Token()
	if err != nil {
		return nil, syntaxError(b, dec.InputOffset(), err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, syntaxError(b, dec.InputOffset(), fmt.Errorf("expected a JSON object"))
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, syntaxError(b, dec.InputOffset(), err)
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, syntaxError(b, dec.InputOffset(), err)
		}
		o.set(k, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, syntaxError(b, dec.InputOffset(), err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, syntaxError(b, dec.InputOffset(), fmt.Errorf("data after the object"))
	}
	return o, nil
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
	return v, ok
}

func (o *object) set(k string, v json.RawMessage) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) del(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, x := range o.keys {
		if x == k {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			break
		}
	}
}

// child decodes the object under k (a new one when absent or not an
// object: ok false then).
func (o *object) child(k string) (*object, bool) {
	v, present := o.get(k)
	if !present {
		return newObject(), false
	}
	c, err := parseObject(v)
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
		b.Write(o.vals[k])
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

// format is the file Claude Code itself writes: two-space indentation
// (JSON.stringify(v, null, 2)), with the trailing newline the original had.
func format(raw json.RawMessage, newline bool) []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		b.Reset()
		b.Write(raw)
	}
	if newline {
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// array decodes a JSON array (nil when absent or not an array).
func array(v json.RawMessage) []json.RawMessage {
	var a []json.RawMessage
	if json.Unmarshal(v, &a) != nil {
		return nil
	}
	return a
}

func rawArray(a []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, v := range a {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(v)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// sameJSON reports whether a and b are the same document, ignoring
// whitespace (key order counts).
func sameJSON(a, b []byte) bool {
	var x, y bytes.Buffer
	return json.Compact(&x, a) == nil && json.Compact(&y, b) == nil && bytes.Equal(x.Bytes(), y.Bytes())
}
