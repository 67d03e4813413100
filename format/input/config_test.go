package input

import (
	"encoding/json"
	"testing"
)

// JSONC as OpenCode, Kilo and Qwen Code accept it: comments and trailing
// commas go, strings holding // or /* or a comma before } stay whole.
func TestStripJSONC(t *testing.T) {
	in := `{
  // a line comment
  "url": "http://127.0.0.1:1/v1", /* a block
  comment */ "s": "a, } // not a comment \" /*",
  "list": [1, 2, ],
  "o": {"k": {"context": 200000,},},
}`
	var got map[string]any
	if err := json.Unmarshal(StripJSONC([]byte(in)), &got); err != nil {
		t.Fatalf("%v: %s", err, StripJSONC([]byte(in)))
	}
	if got["url"] != "http://127.0.0.1:1/v1" || got["s"] != `a, } // not a comment " /*` {
		t.Errorf("strings changed: %q %q", got["url"], got["s"])
	}
	v, ok := ConfigValue(got, "o", "k", "context")
	if !ok || ConfigTokens(v) != 200000 {
		t.Errorf("o.k.context = %v, %v", v, ok)
	}
	if l, _ := got["list"].([]any); len(l) != 2 {
		t.Errorf("list %v", got["list"])
	}
	plain := `{"a":[1,{"b":"c"}]}`
	if string(StripJSONC([]byte(plain))) != plain {
		t.Errorf("plain JSON changed: %s", StripJSONC([]byte(plain)))
	}
	for _, bad := range []any{-1.0, 0.0, 1.5, "x", nil, 1e13} {
		if ConfigTokens(bad) != 0 {
			t.Errorf("ConfigTokens(%v) != 0", bad)
		}
	}
}
