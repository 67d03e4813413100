package report

import (
	"strconv"
	"strings"
)

// Thousands formats n with a comma between groups of three digits, as
// people read token counts: 18402 → "18,402", -1234567 → "-1,234,567".
// Every command prints counts through it, so figures read alike.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
