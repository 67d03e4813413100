// A JSON string literal decoded without encoding/json's second pass.

package transcript

import (
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// UnquoteJSON decodes a JSON string literal exactly as encoding/json does
// (its unquoteBytes, ported, with its scanner's rules: the standard
// escapes, \u with surrogate pairs, an unpaired surrogate or invalid
// UTF-8 as U+FFFD). ok is false
// when lit is not one valid string literal; the caller then asks
// encoding/json, for its error. Text with escapes (every multi-line
// message) took encoding/json's validate-then-decode path before.
func UnquoteJSON(lit []byte) (string, bool) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return "", false
	}
	s := lit[1 : len(lit)-1]
	if plainRun(s, 0) == len(s) {
		return string(s), true
	}
	// Built in place: the result is the builder's bytes, not a copy.
	var b strings.Builder
	b.Grow(len(s))
	for r := 0; r < len(s); {
		switch c := s[r]; {
		case c == '\\':
			r++
			if r >= len(s) {
				return "", false
			}
			switch s[r] {
			default:
				return "", false
			case '"', '\\', '/': // not \', which unquoteBytes takes but the scanner refuses
				b.WriteByte(s[r])
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r--
				rr := getu4(s[r:])
				if rr < 0 {
					return "", false
				}
				r += 6
				if utf16.IsSurrogate(rr) {
					if dec := utf16.DecodeRune(rr, getu4(s[r:])); dec != unicode.ReplacementChar {
						r += 6
						b.WriteRune(dec)
						continue
					}
					rr = unicode.ReplacementChar
				}
				b.WriteRune(rr)
				continue
			}
			r++
		case c == '"', c < ' ':
			return "", false
		case c < utf8.RuneSelf:
			start := r
			r = plainRun(s, r)
			b.Write(s[start:r])
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			b.WriteRune(rr)
		}
	}
	return b.String(), true
}

// getu4 decodes \uXXXX from the beginning of s, returning the hex value,
// or -1 (encoding/json's).
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
