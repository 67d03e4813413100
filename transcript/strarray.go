package transcript

import "unicode/utf8"

// plainStrings decodes raw as encoding/json decodes a []string when raw
// is the plain case: an array of strings without escapes or control
// bytes, valid UTF-8. ok is false for anything else, which the caller
// decodes with encoding/json. A summary's covers_ids is decoded for every
// summary the store appends or indexes, and grows with the session.
func plainStrings(raw []byte) (ids []string, ok bool) {
	i := SkipJSONSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, false
	}
	ids = []string{}
	i = SkipJSONSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return ids, SkipJSONSpace(raw, i+1) == len(raw)
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return nil, false
		}
		j, high := i+1, false
		for ; j < len(raw) && raw[j] != '"'; j++ {
			c := raw[j]
			if c == '\\' || c < 0x20 {
				return nil, false
			}
			high = high || c >= utf8.RuneSelf
		}
		if j >= len(raw) || (high && !utf8.Valid(raw[i+1:j])) {
			return nil, false
		}
		ids = append(ids, string(raw[i+1:j]))
		i = SkipJSONSpace(raw, j+1)
		switch {
		case i < len(raw) && raw[i] == ',':
			i = SkipJSONSpace(raw, i+1)
		case i < len(raw) && raw[i] == ']':
			return ids, SkipJSONSpace(raw, i+1) == len(raw)
		default:
			return nil, false
		}
	}
}
