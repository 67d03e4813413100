package audit

import (
	"reflect"
	"testing"
)

func TestRankOrdersByValueKeepingAppearanceOrder(t *testing.T) {
	in := []Fact{
		{Kind: KindNumber, Text: "42 ms"},
		{Kind: KindPath, Text: "a/b.go"},
		{Kind: KindInstruction, Text: "never push to main"},
		{Kind: KindIdentifier, Text: "ParseDuration"},
		{Kind: KindInstruction, Text: "no, use the v2 API instead"},
		{Kind: KindError, Text: "panic: nil map"},
		{Kind: KindCommand, Text: "go test ./..."},
		{Kind: KindRequest, Text: "fix the parser"},
		{Kind: KindPath, Text: "c/d.go"},
		{Kind: KindURL, Text: "https://example.org/x"},
	}
	got := Rank(in)
	var texts []string
	for _, f := range got {
		texts = append(texts, f.Text)
	}
	want := []string{"fix the parser", "never push to main", "no, use the v2 API instead", "panic: nil map",
		"go test ./...", "a/b.go", "c/d.go", "https://example.org/x", "ParseDuration", "42 ms"}
	if !reflect.DeepEqual(texts, want) {
		t.Fatalf("Rank order:\n got %q\nwant %q", texts, want)
	}
	if in[0].Text != "42 ms" {
		t.Fatal("Rank modified its input")
	}
}
