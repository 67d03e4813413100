package archive

import (
	"strings"
	"testing"
)

func TestSnippetShowsTheQueryWord(t *testing.T) {
	long := strings.Repeat("filler words here ", 20)
	text := long + "the Zanzibar\tmeeting\x1b[31m moved\n" + long
	for _, tc := range []struct{ query, want string }{
		{`zanzibar`, "the Zanzibar meeting"},
		{`"zanzibar meeting"`, "the Zanzibar meeting"},
		{`zanz*`, "the Zanzibar meeting"},
		{`nothere OR meeting`, "Zanzibar meeting"},
	} {
		got := newSnipper(tc.query).cut(text)
		if !strings.Contains(got, tc.want) || !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "…") {
			t.Errorf("%s: %q, want …%s…", tc.query, got, tc.want)
		}
		if strings.ContainsAny(got, "\n\t\x1b") {
			t.Errorf("%s: %q holds control characters", tc.query, got)
		}
		if n := len([]rune(got)); n > 2*snippetRunes+8 { // the escaped ESC is longer
			t.Errorf("%s: %d runes", tc.query, n)
		}
	}
	// "zanz" alone is no word of the text: the snippet is its start.
	if got := newSnipper("zanz").cut(text); !strings.HasPrefix(got, "filler") {
		t.Errorf("zanz: %q", got)
	}
	if got := newSnipper(`AND OR`).cut("short text"); got != "short text" {
		t.Errorf("no words: %q", got)
	}
}
