package audit

import (
	"regexp"
	"strings"
)

// Salient items are what an outside summary — a client's own compaction —
// is measured by (docs/COMPACT.md §7, "Against the client's summary"):
// the things a reader could check against the turns, not its prose.
//
//   - code in backticks, whole, up to 80 bytes (`validate_session_message_ids/2`,
//     `phx-hook="TranscriptSelection"`, `selection_source: :transcript`);
//   - paths (as the path kind finds them);
//   - identifiers outside backticks: snake_case, camelCase, PascalCase
//     with two humps, dotted names (Spotter.Transcripts, window.getSelection),
//     upper-case codes;
//   - numbers of two or more digits (a count, a port, a migration stamp),
//     with their unit when they have one.
//
// Each item once, in order of first appearance.
func Salient(text string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		s = strings.TrimSpace(s)
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	rest := text
	for _, m := range reTickSpan.FindAllStringSubmatch(text, -1) {
		if len(m[1]) <= 80 {
			add(m[1])
		}
		rest = strings.Replace(rest, m[0], " ", 1)
	}
	for _, p := range paths(rest) {
		add(p)
		rest = strings.ReplaceAll(rest, p, " ")
	}
	for _, d := range reDotted.FindAllString(rest, -1) {
		add(d)
		rest = strings.ReplaceAll(rest, d, " ")
	}
	for _, re := range []*regexp.Regexp{reSnake, reCamel, rePascal, reUpperCode, reSalientNumber} {
		for _, m := range re.FindAllString(rest, -1) {
			add(m)
		}
	}
	return out
}

var (
	reTickSpan      = regexp.MustCompile("`([^`\n]+)`")
	reDotted        = regexp.MustCompile(`\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?`)
	reSalientNumber = regexp.MustCompile(`\b\d{2,}(?:[.,]\d+)?(?:\s?(?:ms|s|kb|mb|gb|k|%|tokens|lines|tests))?\b`)
)

// HasSalient reports whether an item is in text as the matcher finds
// facts: verbatim (whitespace collapsed), a path also by its last two
// components, a name/arity also by its name, a call name() also by name,
// a code fragment by its names (each of two characters or more).
func (m *Matcher) HasSalient(item string) bool {
	item = norm(item)
	if strings.Contains(m.text, item) {
		return true
	}
	if isPath(item) && m.Has(Fact{Kind: KindPath, Text: item}) {
		return true
	}
	bare := strings.TrimSuffix(symbolName(item), "()")
	if bare != item && bare != "" && strings.Contains(m.text, bare) {
		return true
	}
	// A code fragment (`msg[:id] || msg[:uuid]`, `selection_source:
	// :terminal`) is held when each of its names is.
	names := reFragmentName.FindAllString(item, -1)
	if len(names) < 2 && strings.Join(names, "") == item {
		return false
	}
	for _, n := range names {
		if !strings.Contains(m.text, n) {
			return false
		}
	}
	return len(names) > 0
}

// reFragmentName is a name in a code fragment: two or more characters.
var reFragmentName = regexp.MustCompile(`[A-Za-z_][\w.]*\w`)
