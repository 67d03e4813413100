package transcript_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/ctxfold/ctxfold/transcript"
)

// JSONStrings walks depth first, object members in key order, so audit and
// the summarizer see a call's arguments in the same order every run.
func TestJSONStrings(t *testing.T) {
	var v any
	if err := json.Unmarshal([]byte(`{"z":"last","a":["one",{"c":"three","b":"two"}],"n":7}`), &v); err != nil {
		t.Fatal(err)
	}
	if got, want := transcript.JSONStrings(v), []string{"one", "two", "three", "last"}; !slices.Equal(got, want) {
		t.Fatalf("%q, want %q", got, want)
	}
}
