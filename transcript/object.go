package transcript

import (
	"bytes"
	"encoding/json"
)

// decodeObject splits a JSON object into its members, like json.Unmarshal
// into a map[string]json.RawMessage (the last of duplicate keys wins, an
// error for anything that is not one valid object), but without
// encoding/json's reflection: the index decodes every line of every
// session through here. The values alias one private copy of data.
func decodeObject(data []byte) (map[string]json.RawMessage, error) {
	if !json.Valid(data) {
		var m map[string]json.RawMessage
		return m, json.Unmarshal(data, &m) // the precise syntax error
	}
	data = bytes.Clone(data)
	i := skipSpace(data, 0)
	if data[i] != '{' {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, err
		}
		return m, nil // null
	}
	m := map[string]json.RawMessage{}
	i = skipSpace(data, i+1)
	if data[i] == '}' {
		return m, nil
	}
	for {
		// data is valid JSON: a key string, a colon, a value, then , or }.
		kEnd := skipString(data, i)
		var key string
		if err := unmarshalString(data[i:kEnd], &key); err != nil {
			return nil, err
		}
		i = skipSpace(data, kEnd)
		i = skipSpace(data, i+1) // the colon
		vEnd := skipValue(data, i)
		m[key] = json.RawMessage(data[i:vEnd])
		i = skipSpace(data, vEnd)
		if data[i] == '}' {
			return m, nil
		}
		i = skipSpace(data, i+1) // the comma
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at data[i].
func skipString(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
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
