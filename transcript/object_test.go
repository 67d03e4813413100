package transcript

import (
	"bytes"
	"encoding/json"
	"testing"
)

// decodeObject is decodeMembers as a map (the last of duplicate keys
// wins; null is a nil map), over a private copy of data: the form the
// fuzz target and the reference decoder in node_decode_ref_test.go use.
func decodeObject(data []byte) (map[string]json.RawMessage, error) {
	ms, err := decodeMembers(bytes.Clone(data), nil)
	if err != nil || ms == nil {
		return nil, err
	}
	m := make(map[string]json.RawMessage, len(ms))
	for _, x := range ms {
		m[x.key] = x.val
	}
	return m, nil
}

// FuzzDecodeObject: decodeObject (so decodeMembers) agrees with encoding/json's decoding into
// a map[string]json.RawMessage on every input (same members, same bytes,
// an error exactly when encoding/json fails).
func FuzzDecodeObject(f *testing.F) {
	for _, s := range []string{
		`{}`, ` { "a" : 1 , "b":[1,{"c":"]}"}], "a":"dup" } `, `{"k\u0069":"\"}\\"}`, `null`, `[1]`, `"s"`,
		`{"a":}`, `{"id":"u1","predecessor":null,"role":"user","content":[{"type":"text","text":"x"}],"usage":{"input_tokens":1}}`,
		"{\"a\":\"\xff\"}", `{"a":1e5,"b":-0.5,"c":true,"d":false}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, gotErr := decodeObject(data)
		var want map[string]json.RawMessage
		wantErr := json.Unmarshal(data, &want)
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("%q: decodeObject error %v, encoding/json error %v", data, gotErr, wantErr)
		}
		if gotErr != nil {
			return
		}
		if len(got) != len(want) || (got == nil) != (want == nil) {
			t.Fatalf("%q: %d members, encoding/json %d", data, len(got), len(want))
		}
		for k, v := range want {
			if !bytes.Equal(got[k], v) {
				t.Fatalf("%q: member %q = %q, encoding/json %q", data, k, got[k], v)
			}
		}
	})
}
