package input

import (
	"encoding/json"
	"strings"
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

func TestConfigModelAndExpandHome(t *testing.T) {
	doc, err := ParseConfig("t", []byte(`{"models":[{"id":"a","w":1},"junk",{"id":"b","w":2}]}`))
	if err != nil {
		t.Fatal(err)
	}
	list, _ := ConfigValue(doc, "models")
	if m, ok := ConfigModel(list, "b"); !ok || ConfigTokens(m["w"]) != 2 {
		t.Errorf("ConfigModel b: %v %v", m, ok)
	}
	if _, ok := ConfigModel(list, "c"); ok {
		t.Error("ConfigModel found an id that is not there")
	}
	if got := DirsRootFirst("/a/b/c"); strings.Join(got, " ") != "/ /a /a/b /a/b/c" {
		t.Errorf("DirsRootFirst = %q", got)
	}
	e := Env{Home: "/h"}
	for in, want := range map[string]string{"~": "/h", "~/x/y": "/h/x/y", "~u/x": "~u/x", "/abs": "/abs", "rel": "rel"} {
		if got := e.ExpandHome(in); got != want {
			t.Errorf("ExpandHome(%q) = %q, want %q", in, got, want)
		}
	}
}
