package input

import (
	"encoding/json"
	"reflect"

	jsonv1 "github.com/go-json-experiment/json/v1"
)

// Unmarshal decodes a JSON value into v exactly as encoding/json would,
// at about three times its speed (docs/BENCHMARKS.md, "decoding
// transcripts"): the first try is github.com/go-json-experiment/json's
// v1-compatible decoder (the code Go ships as encoding/json/v2; it
// validates while it decodes, one pass, where encoding/json validates the
// whole value first and then decodes it). Its v1 options keep
// encoding/json's rules on success: case-insensitive names without
// folding '_' or '-', the last duplicate name wins, invalid UTF-8 becomes
// U+FFFD, UnmarshalJSON methods. Any error sends the value back to
// encoding/json, from zero: error types, fields and messages, and what a
// type error leaves decoded (the Claude Code importer reads past one), are then its
// own, so only well-formed lines take the fast path. The importers'
// hot decode paths (Claude Code, Codex, Lines.Unmarshal) use it.
func Unmarshal(data []byte, v any) error {
	if jsonv1.Unmarshal(data, v) == nil {
		return nil
	}
	reflect.ValueOf(v).Elem().SetZero()
	return json.Unmarshal(data, v)
}
