package transcript

import (
	"encoding/json"
	"testing"
)

// FuzzUnquoteJSON: where UnquoteJSON decodes a literal, encoding/json
// decodes it to the same string; where encoding/json decodes a bare string
// literal, so does UnquoteJSON.
func FuzzUnquoteJSON(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\nb\t\"q\" \\ \/ \' \b\f\r"`, `"\u00e9\u65e5\ud83d\ude00"`, `"\ud83d x"`, `"\udc00"`,
		"\"\xff\xfe é\"", `"\u12"`, `"a\qb"`, `"a"b"`, `"a\"`, "\"\x01\"", ` "a" `, `""`, `"`, `5`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, lit []byte) {
		got, ok := UnquoteJSON(lit)
		var want string
		err := json.Unmarshal(lit, &want)
		if ok && (err != nil || got != want) {
			t.Fatalf("%q: UnquoteJSON %q, encoding/json %q (%v)", lit, got, want, err)
		}
		if !ok && err == nil && len(lit) > 0 && lit[0] == '"' && lit[len(lit)-1] == '"' {
			t.Fatalf("%q: UnquoteJSON refused a literal encoding/json decodes to %q", lit, want)
		}
	})
}
