package transcript

import (
	"encoding/json"
	"testing"
)

// FuzzValidJSON: validJSON accepts exactly what json.Valid accepts.
func FuzzValidJSON(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","role":"user","content":"x"}`, `{"a":1,"a":2}`, "{\"a\":\"\xff\"}", `{"a":"\ud800"}`,
		`{"a":1}x`, `{"a":1} {"b":2}`, `{"a":01}`, `{"a":-}`, `{"a":1e}`, `[1,2,]`, ``, ` `, `null`, `"\u00zz"`,
		"\"a\tb\"", `{"a":[{"b":{"c":[true,false,null,1.5e-3]}}]}`, ` {} `, `{"a":NaN}`, `{"":""}`, "\xef\xbb\xbf{}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := ValidJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid %v", b, got, want)
		}
	})
}
