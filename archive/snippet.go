package archive

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
)

// snipper cuts a hit's snippet from its node's search text: the index is
// contentless (index.go, indexVersion), so the text is read back from the
// archived session, and the first place a query's word occurs is shown.
type snipper struct {
	// re finds the query's words (case-insensitive, at a word's start; a
	// prefix query's word as a prefix); nil when the query names none.
	re *regexp.Regexp
}

// snippetRunes is how much text a snippet shows on each side of the word.
const snippetRunes = 60

// newSnipper reads the words of an FTS5 query: barewords and the words
// of "phrases", without the operators AND, OR, NOT and NEAR.
func newSnipper(query string) *snipper {
	var alts []string
	fields := strings.FieldsFunc(query, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '*')
	})
	for _, w := range fields {
		if w == "AND" || w == "OR" || w == "NOT" || w == "NEAR" {
			continue
		}
		prefix := strings.HasSuffix(w, "*")
		w = strings.Trim(w, "*")
		if w == "" {
			continue
		}
		alt := regexp.QuoteMeta(w)
		if !prefix {
			alt += `(?:[^\pL\pN_]|$)`
		}
		alts = append(alts, alt)
	}
	if len(alts) == 0 {
		return &snipper{}
	}
	re, err := regexp.Compile(`(?i)(?:^|[^\pL\pN_])(` + strings.Join(alts, "|") + `)`)
	if err != nil {
		return &snipper{}
	}
	return &snipper{re: re}
}

// of is the snippet of node i of s ("" when it cannot be read: the hit
// is still shown).
func (sn *snipper) of(s *store.Session, i int) string {
	raw, err := s.RawLine(i)
	if err != nil {
		return ""
	}
	n, err := s.DecodeLine(i, raw)
	if err != nil {
		return ""
	}
	return sn.cut(render.SearchText(n))
}

// cut is text around the first match, on one line, "…" where cut; the
// text's start when no word is found as written (FTS5 also folds
// diacritics).
func (sn *snipper) cut(text string) string {
	start, end := 0, 0
	if sn.re != nil {
		if m := sn.re.FindStringSubmatchIndex(text); m != nil {
			start, end = m[2], m[2]
		}
	}
	back := 0
	for ; back < snippetRunes && start > 0; back++ {
		_, size := utf8.DecodeLastRuneInString(text[:start])
		start -= size
	}
	// The runes not shown before the word are shown after it.
	for k := 0; k < 2*snippetRunes-back && end < len(text); k++ {
		_, size := utf8.DecodeRuneInString(text[end:])
		end += size
	}
	s := render.TextSafe(strings.Join(strings.Fields(text[start:end]), " "))
	if start > 0 {
		s = "…" + s
	}
	if end < len(text) {
		s += "…"
	}
	return s
}
