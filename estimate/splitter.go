package estimate

import (
	"unicode"
	"unicode/utf8"
)

// A hand-written pre-splitter for the o200k_base and cl100k_base patterns
// (see patterns). The regexp2-based split was 67–75% of CPU and serialised
// goroutines; this one walks the string once, allocates nothing, and gives
// exactly the pieces regexp2 gives (FuzzSplitterMatchesRegexp compares the
// boundaries; the reference vectors compare the counts). Each function
// below mirrors one alternative of the pattern, including the outcome of
// the backtracking the regex engine would do.

// Character classes, as regexp2 evaluates them: \s is unicode.IsSpace,
// \p{X} is unicode.Is(unicode.Categories[X]).
const (
	cLetter  = 1 << iota // \p{L}
	cUpper               // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]: o200k's "X" class
	cLower               // [\p{Ll}\p{Lm}\p{Lo}\p{M}]: o200k's "Y" class
	cNumber              // \p{N}
	cSpace               // \s
	cNewline             // [\r\n]
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for r := rune(0); r < utf8.RuneSelf; r++ {
		t[r] = classify(r)
	}
	return t
}()

func classify(r rune) uint8 {
	var c uint8
	if unicode.IsLetter(r) {
		c |= cLetter
	}
	isM := unicode.Is(unicode.M, r)
	both := isM || unicode.Is(unicode.Lm, r) || unicode.Is(unicode.Lo, r)
	if both || unicode.Is(unicode.Lu, r) || unicode.Is(unicode.Lt, r) {
		c |= cUpper
	}
	if both || unicode.Is(unicode.Ll, r) {
		c |= cLower
	}
	if unicode.IsNumber(r) {
		c |= cNumber
	}
	if unicode.IsSpace(r) {
		c |= cSpace
	}
	if r == '\r' || r == '\n' {
		c |= cNewline
	}
	return c
}

// at decodes the rune at byte i and its class.
func at(s string, i int) (uint8, int) {
	if b := s[i]; b < utf8.RuneSelf {
		return asciiClass[b], 1
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	return classify(r), w
}

// prefixClass is [^\r\n\p{L}\p{N}].
func prefixClass(c uint8) bool { return c&(cNewline|cLetter|cNumber) == 0 }

// punctClass is [^\s\p{L}\p{N}].
func punctClass(c uint8) bool { return c&(cSpace|cLetter|cNumber) == 0 }

// contraction matches (?i:'s|'t|'re|'ve|'m|'ll|'d) at i; it returns the
// end, or i when there is none.
func contraction(s string, i int) int {
	if i+1 >= len(s) || s[i] != '\'' {
		return i
	}
	switch s[i+1] | 0x20 {
	case 's', 't', 'm', 'd':
		return i + 2
	case 'r', 'v', 'l':
		if i+2 < len(s) {
			want := byte('e')
			if s[i+1]|0x20 == 'l' {
				want = 'l'
			}
			if s[i+2]|0x20 == want {
				return i + 3
			}
		}
	}
	return i
}

// o200kLetters is X*Y+C? from j (o200k's first alternative, without its
// prefix). Greedy X* then Y+; when the char after the X run is not in Y,
// the engine backtracks X* to the last X char that is also in Y. -1 when
// it cannot match.
func o200kLetters(s string, j int) int {
	k, lastY := j, -1
	for k < len(s) {
		c, w := at(s, k)
		if c&cUpper == 0 {
			break
		}
		k += w
		if c&cLower != 0 {
			lastY = k
		}
	}
	if k < len(s) {
		if c, _ := at(s, k); c&cLower != 0 {
			for k < len(s) {
				c, w := at(s, k)
				if c&cLower == 0 {
					break
				}
				k += w
			}
			return contraction(s, k)
		}
	}
	if lastY > j {
		return contraction(s, lastY)
	}
	return -1
}

// o200kCaps is X+Y*C? from j (the second alternative, without prefix).
func o200kCaps(s string, j int) int {
	k := j
	for k < len(s) {
		c, w := at(s, k)
		if c&cUpper == 0 {
			break
		}
		k += w
	}
	if k == j {
		return -1
	}
	for k < len(s) {
		c, w := at(s, k)
		if c&cLower == 0 {
			break
		}
		k += w
	}
	return contraction(s, k)
}

// numbers is \p{N}{1,3} at i (c0 is the class of the rune at i).
func numbers(s string, i int) int {
	k := i
	for n := 0; n < 3 && k < len(s); n++ {
		c, w := at(s, k)
		if c&cNumber == 0 {
			break
		}
		k += w
	}
	return k
}

// punctuation is " ?[^\s\p{L}\p{N}]+" followed by tail (o200k: [\r\n/]*,
// cl100k: [\r\n]*). -1 when it cannot match.
func punctuation(s string, i int, slash bool) int {
	j := i
	if s[i] == ' ' && i+1 < len(s) {
		if c, _ := at(s, i+1); punctClass(c) {
			j = i + 1
		}
	}
	k := j
	for k < len(s) {
		c, w := at(s, k)
		if !punctClass(c) {
			break
		}
		k += w
	}
	if k == j {
		return -1
	}
	for k < len(s) && (s[k] == '\r' || s[k] == '\n' || (slash && s[k] == '/')) {
		k++
	}
	return k
}

// whitespace is \s*[\r\n]+ | \s+(?!\S) | \s+ at i, where the rune at i is
// a space.
func whitespace(s string, i int) int {
	k, lastNL, lastStart := i, -1, i
	for k < len(s) {
		c, w := at(s, k)
		if c&cSpace == 0 {
			break
		}
		if c&cNewline != 0 {
			lastNL = k + 1
		}
		lastStart = k
		k += w
	}
	switch {
	case lastNL > 0:
		// \s* backtracks to the last newline of the run; [\r\n]+ ends there.
		return lastNL
	case k == len(s):
		return k
	case lastStart > i:
		// \s+(?!\S): give back the last space, which then starts the
		// next piece (" word").
		return lastStart
	}
	return k
}

// o200kNext returns the end of the piece that starts at i.
func o200kNext(s string, i int) int {
	c0, w0 := at(s, i)
	pre := prefixClass(c0)
	if pre {
		if e := o200kLetters(s, i+w0); e > 0 {
			return e
		}
	}
	if e := o200kLetters(s, i); e > 0 {
		return e
	}
	if pre {
		if e := o200kCaps(s, i+w0); e > 0 {
			return e
		}
	}
	if e := o200kCaps(s, i); e > 0 {
		return e
	}
	if c0&cNumber != 0 {
		return numbers(s, i)
	}
	if e := punctuation(s, i, true); e > 0 {
		return e
	}
	return whitespace(s, i)
}

// cl100kNext returns the end of the piece that starts at i.
func cl100kNext(s string, i int) int {
	if e := contraction(s, i); e > i {
		return e
	}
	c0, w0 := at(s, i)
	letters := func(k int) int {
		for k < len(s) {
			c, w := at(s, k)
			if c&cLetter == 0 {
				break
			}
			k += w
		}
		return k
	}
	if prefixClass(c0) && i+w0 < len(s) {
		if c1, _ := at(s, i+w0); c1&cLetter != 0 {
			return letters(i + w0)
		}
	}
	if c0&cLetter != 0 {
		return letters(i)
	}
	if c0&cNumber != 0 {
		return numbers(s, i)
	}
	if e := punctuation(s, i, false); e > 0 {
		return e
	}
	return whitespace(s, i)
}

// splitFunc returns the pre-splitter of an encoding.
func splitFunc(enc string) func(s string, i int) int {
	if enc == Cl100kBase {
		return cl100kNext
	}
	return o200kNext
}
