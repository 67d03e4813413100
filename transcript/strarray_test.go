package transcript

import (
	"encoding/json"
	"reflect"
	"testing"
)

var stringArraySeeds = []string{`[]`, ` [ ] `, `["a"]`, `["a","b"]`, ` [ "a" , "b" ] `, `["sum:1","n-2"]`,
	`["a",]`, `[,"a"]`, `["a" "b"]`, `["a"]x`, `["a\"b"]`, `["\u0041"]`, "[\"a\tb\"]", `[1]`, `[null]`, `null`,
	`"a"`, `{}`, `["a"`, `[`, "[\"\xff\"]", "[\"h\u00e9\"]", `["a"]]`, ``}

// plainStringsAgrees checks plainStrings against encoding/json on raw.
func plainStringsAgrees(t *testing.T, raw []byte) bool {
	got, ok := plainStrings(raw)
	if !ok {
		return false
	}
	var want []string
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Errorf("plainStrings decodes %q, which encoding/json refuses: %v", raw, err)
	} else if !reflect.DeepEqual(got, want) {
		t.Errorf("plainStrings(%q) = %#v, encoding/json %#v", raw, got, want)
	}
	return true
}

func TestPlainStrings(t *testing.T) {
	plain := 0
	for _, s := range stringArraySeeds {
		if plainStringsAgrees(t, []byte(s)) {
			plain++
		}
	}
	if plain != 7 {
		t.Errorf("plainStrings decoded %d seeds, want the 7 plain ones", plain)
	}
}

func FuzzPlainStrings(f *testing.F) {
	for _, s := range stringArraySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { plainStringsAgrees(t, raw) })
}
