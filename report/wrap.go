package report

import (
	"strings"
	"unicode/utf8"
)

// Wrap breaks a line for a terminal of width columns at spaces, so the
// terminal never wraps it in the middle of a word; continuation lines are
// indented by two spaces. Colour sequences (ESC [ … m) take no column. A
// word longer than the width stays whole on a line of its own. width <= 0
// (not a terminal, or its width unknown) returns s as it is.
func Wrap(s string, width int) string {
	if width <= 0 || visibleWidth(s) <= width {
		return s
	}
	const indent = "  "
	var b strings.Builder
	col := 0
	for i, word := range strings.Split(s, " ") {
		w := visibleWidth(word)
		switch {
		case i == 0:
		case col+1+w > width && col > len(indent):
			b.WriteString("\n" + indent)
			col = len(indent)
		default:
			b.WriteByte(' ')
			col++
		}
		b.WriteString(word)
		col += w
	}
	return b.String()
}

// visibleWidth counts the runes of s outside SGR colour sequences.
func visibleWidth(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';') {
				j++
			}
			if j < len(s) && s[j] == 'm' {
				i = j + 1
				continue
			}
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n++
	}
	return n
}
