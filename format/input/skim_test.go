package input

import (
	"encoding/json"
	"reflect"
	"testing"
)

var skimSeeds = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e-3`, `-12E+4`, `true`, `false`, `null`, ` {"a" : [1, "x", {"b":null}] } `,
	`{"a":1,}`, `[1,]`, `[,1]`, `{"a"}`, `{"a":}`, `{a:1}`, `{"a":1 "b":2}`, `01`, `1.`, `.5`, `-`, `1e`, `+1`,
	`tru`, `nul`, `"\q"`, `"\u12"`, `"\u12G4"`, "\"a\tb\"", "\"abcdefgh\x1fijklm\"", `"\ud800"`, `"\ud83d\ude00"`,
	"\"\xff\"", "{\"\xff\":1}", `{"\u00e9":1,"\u00e9":2}`, `{"a":1,"a":{"b":2}}`, `1e400`, `[1e400]`, `"unterminated`,
	`{"a":"x"}}`, `[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]`, `"0123456789abcdef\"0123456789\\abcdef"`,
}

// skimAgrees checks Skim against encoding/json on b: it accepts only
// valid JSON, and whatever Any decodes equals json.Unmarshal's value.
func skimAgrees(t *testing.T, b []byte) {
	s := NewSkim(b)
	s.Skip()
	if s.End() && !json.Valid(b) {
		t.Errorf("Skip accepts invalid JSON %q", b)
	}
	a := NewSkim(b)
	got := a.Any()
	if !a.End() {
		return
	}
	var want any
	if err := json.Unmarshal(b, &want); err != nil {
		t.Errorf("Any decodes %q, which encoding/json refuses: %v", b, err)
	} else if !reflect.DeepEqual(got, want) {
		t.Errorf("Any(%q) = %#v, encoding/json %#v", b, got, want)
	}
}

func TestSkimAgreesWithEncodingJSON(t *testing.T) {
	accepted := 0
	for _, seed := range skimSeeds {
		skimAgrees(t, []byte(seed))
		s := NewSkim([]byte(seed))
		s.Skip()
		if s.End() {
			accepted++
		} else if json.Valid([]byte(seed)) {
			// Skip refuses only what a fast path must not decode itself.
			t.Errorf("Skip refuses valid JSON %q", seed)
		}
	}
	if accepted < 15 {
		t.Errorf("Skip accepted %d seeds", accepted)
	}
}

func TestSkimStrings(t *testing.T) {
	for in, want := range map[string]string{
		`"plain"`: "plain", `"a\nb\"c\\d\/e\u00e9\t"`: "a\nb\"c\\d/e\u00e9\t", `null`: "",
		`"0123456789abcdef\u0041"`: "0123456789abcdefA", "\"h\u00e9llo w\u00f6rld, long enough\"": "h\u00e9llo w\u00f6rld, long enough",
		// As encoding/json decodes them: a pair, a lone surrogate and
		// invalid UTF-8.
		`"\ud83d\ude00"`: "\U0001F600", `"\ud800"`: "\uFFFD", "\"a\xffb\"": "a\uFFFDb",
	} {
		s := NewSkim([]byte(in))
		if got := s.Str(); !s.End() || got != want {
			t.Errorf("Str(%s) = %q, %v; want %q", in, got, s.OK(), want)
		}
	}
	for _, in := range []string{`1`, `{}`, `"a`, `"\u12"`, "\"a\x01\""} {
		s := NewSkim([]byte(in))
		if s.Str(); s.End() {
			t.Errorf("Str(%s) succeeded", in)
		}
	}
}

func TestNearName(t *testing.T) {
	norms := []string{"parentuuid", "type"}
	for key, want := range map[string]bool{"parentUuid": true, "PARENTUUID": true, "parent_uuid": true,
		"parent-uuid": true, "Type": true, "types": false, "uuid": false, "typ\u0117": true, "": false} {
		if got := NearName([]byte(key), norms); got != want {
			t.Errorf("NearName(%q) = %v", key, got)
		}
	}
}

func FuzzSkim(f *testing.F) {
	for _, seed := range skimSeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(skimAgrees)
}
