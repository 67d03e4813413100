package transcript

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// member is one key and value of a JSON object.
type member struct {
	key string
	val json.RawMessage
}

// members are an object's members in order. Node decoding goes through
// them rather than a map: a map per object (each content block is one)
// was most of what decoding a node allocated.
type members []member

// get returns the value of key, the last one when the key repeats.
func (ms members) get(key string) (json.RawMessage, bool) {
	for k := len(ms) - 1; k >= 0; k-- {
		if ms[k].key == key {
			return ms[k].val, true
		}
	}
	return nil, false
}

// decodeMembers splits a JSON object into its members, as json.Unmarshal
// into a map[string]json.RawMessage would (members.get gives the last of
// duplicate keys; an error for anything that is not one valid object; nil
// members for null; FuzzDecodeObject compares them), without a map:
// values alias data, and members go into buf (which a caller keeps on its
// stack). An empty object gives an empty, non-nil slice.
func decodeMembers(data []byte, buf members) (members, error) {
	if !ValidJSON(data) {
		var m map[string]json.RawMessage
		return nil, json.Unmarshal(data, &m) // the precise syntax error
	}
	return splitMembers(data, buf)
}

// membersOf is decodeMembers, without the validation when data is part of
// a value already validated (valid): a node's line is checked once, not
// once more per content block.
func membersOf(data []byte, buf members, valid bool) (members, error) {
	if valid {
		return splitMembers(data, buf)
	}
	return decodeMembers(data, buf)
}

// splitMembers is decodeMembers over valid JSON.
func splitMembers(data []byte, buf members) (members, error) {
	i := SkipJSONSpace(data, 0)
	if data[i] != '{' {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, err
		}
		return nil, nil // null
	}
	ms := buf[:0]
	if ms == nil {
		ms = members{}
	}
	i = SkipJSONSpace(data, i+1)
	if data[i] == '}' {
		return ms, nil
	}
	for {
		// data is valid JSON: a key string, a colon, a value, then , or }.
		kEnd := skipString(data, i)
		raw := data[i:kEnd]
		var key string
		if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
			// The common case; the known keys need no allocation.
			key = internKey(raw[1 : len(raw)-1])
		} else if err := unmarshalString(raw, &key); err != nil {
			return nil, err
		}
		i = SkipJSONSpace(data, kEnd)
		i = SkipJSONSpace(data, i+1) // the colon
		vEnd := skipValue(data, i)
		ms = append(ms, member{key: key, val: json.RawMessage(data[i:vEnd])})
		i = SkipJSONSpace(data, vEnd)
		if data[i] == '}' {
			return ms, nil
		}
		i = SkipJSONSpace(data, i+1) // the comma
	}
}

// knownKeys are the keys of the format's objects, returned as constants.
var knownKeys = func() map[string]string {
	m := map[string]string{}
	for _, list := range [][]string{nodeKnown, blockKnown, {"id", "name", "arguments", "input_tokens", "output_tokens", "cached_input_tokens"}} {
		for _, k := range list {
			m[k] = k
		}
	}
	return m
}()

func internKey(b []byte) string {
	if k, ok := knownKeys[string(b)]; ok { // no allocation: a map lookup by []byte
		return k
	}
	return string(b)
}

func SkipJSONSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at data[i].
func skipString(data []byte, i int) int {
	for i++; ; i += 2 {
		if i = nextQuoteOrEscape(data, i); i >= len(data) {
			return i
		}
		if data[i] == '"' {
			return i + 1
		}
	}
}

// skipValue returns the index after the (valid) value starting at data[i].
func skipValue(data []byte, i int) int {
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for ; i < len(data); i++ {
			switch data[i] {
			case '"':
				i = skipString(data, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(data) && data[i] != ',' && data[i] != '}' && data[i] != ']' && data[i] != ' ' && data[i] != '\t' && data[i] != '\n' && data[i] != '\r' {
		i++
	}
	return i
}

// decodeArray decodes a JSON array (or null, as nil) element by element
// with T's UnmarshalJSON, as encoding/json would, without its reflection.
// An empty array is an empty, non-nil slice.
func decodeArray[T any, PT interface {
	*T
	UnmarshalJSON([]byte) error
}](data []byte) ([]T, error) {
	return decodeElements(data, false, func(t *T, el []byte, _ bool) error { return PT(t).UnmarshalJSON(el) })
}

// decodeElements is decodeArray with dec for the elements, and without
// the validation when data is part of a validated value (valid).
func decodeElements[T any](data []byte, valid bool, dec func(*T, []byte, bool) error) ([]T, error) {
	data = bytes.TrimSpace(data)
	if !(valid || ValidJSON(data)) || data[0] != '[' {
		var out []T
		if err := json.Unmarshal(data, &out); err != nil {
			return nil, err
		}
		return out, nil // null
	}
	n := 0
	EachJSONElement(data, func([]byte) bool { n++; return true })
	out := make([]T, n)
	k := 0
	var err error
	EachJSONElement(data, func(el []byte) bool {
		err = dec(&out[k], el, true)
		k++
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// eachMember calls fn with the raw key (without quotes) and value of each
// member of the object at data[i], which must be valid JSON, until fn
// returns false.
func EachJSONMember(data []byte, i int, fn func(key, val []byte) bool) {
	i = SkipJSONSpace(data, i+1)
	if data[i] == '}' {
		return
	}
	for {
		kEnd := skipString(data, i)
		key := data[i+1 : kEnd-1]
		i = SkipJSONSpace(data, kEnd)
		i = SkipJSONSpace(data, i+1) // the colon
		vEnd := skipValue(data, i)
		if !fn(key, data[i:vEnd]) {
			return
		}
		i = SkipJSONSpace(data, vEnd)
		if data[i] == '}' {
			return
		}
		i = SkipJSONSpace(data, i+1) // the comma
	}
}

// eachElement calls fn with each element of the valid JSON array arr
// while it returns true, and reports whether all did.
func EachJSONElement(arr []byte, fn func(el []byte) bool) bool {
	i := SkipJSONSpace(arr, 1)
	if arr[i] == ']' {
		return true
	}
	for {
		end := skipValue(arr, i)
		if !fn(arr[i:end]) {
			return false
		}
		i = SkipJSONSpace(arr, end)
		if arr[i] == ']' {
			return true
		}
		i = SkipJSONSpace(arr, i+1)
	}
}
