package mcpserver

import (
	"encoding/json"
	"fmt"
	"regexp/syntax"
	"unicode/utf8"
)

// The bounds of a search_history query (issue 45): the query's length,
// and for a regular expression the size of its compiled program. Go's
// regexp is linear in the text, but its cost per byte grows with the
// program: a 31-byte pattern of nested counted repetitions compiles to
// 573 instructions and scans 1 MB in 2.5 s, a longer one of them took
// over 120 s on an 8 MB transcript.
const (
	maxQueryBytes = 1024
	maxRegexpInst = 1000
	// maxEcho is how much of a query or an id an answer quotes back.
	maxEcho = 200
)

// checkQuery refuses a query over the bounds, saying which.
func checkQuery(q string, isRegexp bool) error {
	if len(q) > maxQueryBytes {
		return fmt.Errorf("the query is %d bytes: at most %d", len(q), maxQueryBytes)
	}
	if !isRegexp {
		return nil
	}
	re, err := syntax.Parse(q, syntax.Perl)
	if err != nil {
		return fmt.Errorf("regexp %q: %v", clip(q, maxEcho), err)
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return fmt.Errorf("regexp %q: %v", clip(q, maxEcho), err)
	}
	if n := len(prog.Inst); n > maxRegexpInst {
		return fmt.Errorf("regexp %q compiles to %d instructions, over the %d a search may take (it would scan slowly): "+
			"use fewer or smaller counted repetitions ({m,n}) and alternatives", clip(q, maxEcho), n, maxRegexpInst)
	}
	return nil
}

// clip cuts s to at most n runes, on a character boundary, marking the cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, k := 0, 0
	for i = range s {
		if k == n {
			break
		}
		k++
	}
	return s[:i] + "…"
}

func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// jsonRuneLen is how many bytes a JSON encoder may write for r in a
// string: escapes for quotes, backslashes and controls, \u escapes for
// <, > and & (encoding/json's HTML escaping), U+2028, U+2029 and invalid
// bytes (written as \ufffd).
func jsonRuneLen(r rune, size int) int {
	switch {
	case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t' || r == '\b' || r == '\f':
		return 2
	case r < 0x20 || r == '<' || r == '>' || r == '&' || r == '\u2028' || r == '\u2029':
		return 6
	case r == utf8.RuneError && size == 1:
		return 6
	}
	return size
}

// jsonLen is the most bytes s takes as a JSON string, quotes included.
func jsonLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		n += jsonRuneLen(r, size)
		i += size
	}
	return n
}

// fitJSON is the longest prefix of s, cut on a character boundary, whose
// JSON string takes at most limit bytes.
func fitJSON(s string, limit int) int {
	n := 2
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if n += jsonRuneLen(r, size); n > limit {
			return i
		}
		i += size
	}
	return len(s)
}

// readOverhead is what a read_turns answer takes besides its turns and
// file name: the result's envelope (content, structuredContent, the
// JSON-RPC response around them) and the cut note.
const readOverhead = 512

// turnOverhead is what one turn takes besides its text, twice: in the
// structured result and in the text rendering.
func turnOverhead(t Turn, head string) int {
	t.Text = ""
	b, _ := json.Marshal(t)
	return len(b) + jsonLen(head) + 64
}
