// The hand-written JSON plumbing behind the node types' Marshal and
// Unmarshal methods: fixed key order so a node always encodes to the same
// bytes, and unknown keys kept so nothing in a line is lost.

package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"unicode/utf8"
)

// objectWriter writes a JSON object with keys in a fixed order, so that a
// node always encodes to the same bytes.
type objectWriter struct {
	buf   bytes.Buffer
	first bool
	err   error
}

func newObjectWriter() *objectWriter {
	w := &objectWriter{first: true}
	w.buf.WriteByte('{')
	return w
}

func (w *objectWriter) key(k string) {
	if !w.first {
		w.buf.WriteByte(',')
	}
	w.first = false
	w.buf.Write(marshalString(k))
	w.buf.WriteByte(':')
}

func (w *objectWriter) str(k, v string, always bool) {
	if v == "" && !always {
		return
	}
	w.key(k)
	w.buf.Write(marshalString(v))
}

func (w *objectWriter) raw(k string, v []byte) {
	w.key(k)
	w.buf.Write(v)
}

func (w *objectWriter) value(k string, v any) {
	// Like json.Marshal, without HTML escaping: "<" is stored as "<".
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	if err != nil && w.err == nil {
		w.err = err
	}
	w.raw(k, bytes.TrimRight(buf.Bytes(), "\n"))
}

func (w *objectWriter) extra(m map[string]json.RawMessage) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		w.raw(k, m[k])
	}
}

func (w *objectWriter) close() []byte {
	w.buf.WriteByte('}')
	return w.buf.Bytes()
}

// sortedRaw is a map that encoding/json writes with sorted keys; it exists
// to make compact encoding explicit.
type sortedRaw map[string]json.RawMessage

func (s sortedRaw) MarshalJSON() ([]byte, error) {
	w := newObjectWriter()
	w.extra(s)
	return w.close(), w.err
}

func marshalString(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimRight(buf.Bytes(), "\n")
}

func takeString(m members, key string, dst *string) error {
	raw, ok := m.get(key)
	if !ok || string(raw) == "null" {
		return nil
	}
	if err := unmarshalString(raw, dst); err != nil {
		return fmt.Errorf("%q must be a string", key)
	}
	return nil
}

// unmarshalString decodes a JSON string. raw comes from an object that
// encoding/json has already validated, so a string without escapes is its
// bytes between the quotes (the common case, and the index's hot path).
func unmarshalString(raw json.RawMessage, dst *string) error {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && bytes.IndexByte(raw[1:n-1], '\\') < 0 &&
		bytes.IndexByte(raw[1:n-1], '"') < 0 && utf8.Valid(raw[1:n-1]) {
		*dst = string(raw[1 : n-1])
		return nil
	}
	if s, ok := UnquoteJSON(raw); ok {
		*dst = s
		return nil
	}
	return json.Unmarshal(raw, dst)
}

// leftovers returns the members whose keys are not known, their values
// copied (members alias the decoded line), or nil.
func leftovers(ms members, known []string) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	for _, x := range ms {
		if slices.Contains(known, x.key) {
			continue
		}
		if out == nil {
			out = map[string]json.RawMessage{}
		}
		out[x.key] = append(json.RawMessage(nil), x.val...)
	}
	return out
}

// leftoversMap is leftovers for a decoded map (session.json's meta).
func LeftoversMap(m map[string]json.RawMessage, known []string) map[string]json.RawMessage {
	for _, k := range known {
		delete(m, k)
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// jsonErrorText describes why a line is not a JSON object, in words that
// do not leak Go types.
func jsonErrorText(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("expected a JSON object: %s at byte %d", se.Error(), se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("expected a JSON object, got %s", jsonKind(te.Value))
	}
	return "expected a JSON object: " + err.Error()
}

func jsonKind(v string) string {
	switch v {
	case "array":
		return "an array"
	case "string", "number":
		return "a " + v
	case "bool":
		return "a boolean"
	}
	return v
}
