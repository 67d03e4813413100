package input

// This file holds Skim, the reader behind the importers' fast decode paths
// (docs/BENCHMARKS.md, "the cold path", step 5): most of a transcript line
// is text the import does not read (tool output, file contents), and a
// general decoder spends most of its time validating and copying it.

import (
	"strconv"
	"unicode/utf8"

	"github.com/ctxfold/ctxfold/transcript"
)

// Skim reads one JSON value's bytes as a pull parser: a fast path asks for
// the fields it wants and skips the rest, every byte validated on the way.
// It knows JSON's grammar, decodes strings as encoding/json does, and
// knows nothing of encoding/json's leniencies (case-folded names, type
// errors, escaped names): whatever falls outside the plain case makes it
// fail, and the
// caller decodes the value again with Unmarshal, whose result and errors
// stay the only reference. So a fast path only has to be right where Skim
// succeeds; the tests compare the two on every shared transcript line.
//
// Every method is a no-op once Skim has failed; OK reports it.
type Skim struct {
	b    []byte
	i    int
	bad  bool
	deep int
	// high: a string read so far holds a byte over 0x7f.
	high bool
}

// maxSkimDepth bounds nesting far below encoding/json's limit; a deeper
// value is left to Unmarshal.
const maxSkimDepth = 200

// NewSkim starts reading b.
func NewSkim(b []byte) Skim { return Skim{b: b} }

// OK reports whether everything read so far was plain JSON.
func (s *Skim) OK() bool { return !s.bad }

// ASCII reports whether every string read so far was ASCII (so the
// input, if OK, is valid UTF-8 without another look at it).
func (s *Skim) ASCII() bool { return !s.high }

// Fail marks the value as one for Unmarshal.
func (s *Skim) Fail() { s.bad = true }

// End checks that nothing but white space follows the value.
func (s *Skim) End() bool {
	s.ws()
	if s.i != len(s.b) {
		s.bad = true
	}
	return !s.bad
}

func (s *Skim) ws() { s.i = transcript.SkipJSONSpace(s.b, s.i) }

// Peek returns the first byte of the next value ('{', '[', '"', 't', 'f',
// 'n', a digit or '-'), or 0 at the end or after a failure.
func (s *Skim) Peek() byte {
	s.ws()
	if s.bad || s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// Null consumes a null if one is next.
func (s *Skim) Null() bool {
	if s.Peek() == 'n' {
		return s.literal("null")
	}
	return false
}

// Open consumes the opening bracket c ('{' or '[').
func (s *Skim) Open(c byte) bool {
	if s.Peek() != c {
		s.bad = true
		return false
	}
	if s.deep++; s.deep > maxSkimDepth {
		s.bad = true
		return false
	}
	s.i++
	return true
}

// More moves to the next member of the container closed by c: false at
// its end (consumed) or after a failure. *first is true before the first
// member.
func (s *Skim) More(c byte, first *bool) bool {
	p := s.Peek()
	if s.bad {
		return false
	}
	if p == c {
		s.i++
		s.deep--
		return false
	}
	if !*first {
		if p != ',' {
			s.bad = true
			return false
		}
		s.i++
		s.ws()
	}
	*first = false
	return true
}

// Object reads the object that is next, member by member. field reads
// the value of a member it knows and returns the member's bit (its own
// power of two), or returns 0, having read nothing, for a name it does not
// know, whose value is skipped — unless encoding/json could still match
// that name to a field (NearName against norms) or a bit comes twice: then
// s fails.
func (s *Skim) Object(norms []string, field func(key []byte) uint32) {
	if !s.Open('{') {
		return
	}
	var have uint32
	for first := true; s.More('}', &first); {
		key := s.Key()
		bit := field(key)
		if bit == 0 {
			if NearName(key, norms) {
				s.bad = true
			}
			s.Skip()
			continue
		}
		if have&bit != 0 {
			s.bad = true
		}
		have |= bit
	}
}

// Key reads an object member's name and its colon. A name with an escape
// fails: it could spell any name.
func (s *Skim) Key() []byte {
	if s.Peek() != '"' {
		s.bad = true
		return nil
	}
	start := s.i + 1
	end, esc, _ := s.str()
	if esc {
		s.bad = true
	}
	s.colon()
	if s.bad {
		return nil
	}
	return s.b[start:end]
}

// skipName passes over any member name and its colon.
func (s *Skim) skipName() {
	if s.Peek() != '"' {
		s.bad = true
	}
	s.str()
	s.colon()
}

// name reads any member name, decoded, and its colon.
func (s *Skim) name() string {
	if s.Peek() != '"' {
		s.bad = true
	}
	k := s.Str()
	s.colon()
	return k
}

// colon consumes the colon after a member's name.
func (s *Skim) colon() {
	if s.Peek() != ':' {
		s.bad = true
		return
	}
	s.i++
}

// Str reads a string, or null as "", and decodes it as encoding/json
// does (transcript.UnquoteJSON); any other value fails.
func (s *Skim) Str() string {
	switch s.Peek() {
	case 'n':
		s.literal("null")
		return ""
	case '"':
	default:
		s.bad = true
		return ""
	}
	start := s.i
	end, esc, high := s.str()
	if s.bad {
		return ""
	}
	if !esc && !high {
		return string(s.b[start+1 : end])
	}
	v, ok := transcript.UnquoteJSON(s.b[start : end+1])
	if !ok {
		s.bad = true
	}
	return v
}

// Bool reads true, false or null (as false).
func (s *Skim) Bool() bool {
	switch s.Peek() {
	case 't':
		return s.literal("true")
	case 'f':
		s.literal("false")
	case 'n':
		s.literal("null")
	default:
		s.bad = true
	}
	return false
}

// Raw skips a value and returns its bytes (a slice of the input).
func (s *Skim) Raw() []byte {
	s.ws()
	start := s.i
	s.Skip()
	if s.bad {
		return nil
	}
	return s.b[start:s.i]
}

// Int64 reads an integer as encoding/json decodes it into an int64: a
// fraction, an exponent or a value out of range fails.
func (s *Skim) Int64() int64 {
	n, err := strconv.ParseInt(s.numberText(), 10, 64)
	if err != nil {
		s.bad = true
	}
	return n
}

// Any reads a value as encoding/json decodes it into an interface:
// map[string]any, []any, string, float64, bool or nil. A number out of
// float64's range fails (encoding/json refuses it).
func (s *Skim) Any() any {
	switch c := s.Peek(); c {
	case '"':
		return s.Str()
	case '{':
		m := map[string]any{}
		s.Open('{')
		for first := true; s.More('}', &first); {
			k := s.name()
			m[k] = s.Any()
		}
		return m
	case '[':
		a := []any{}
		s.Open('[')
		for first := true; s.More(']', &first); {
			a = append(a, s.Any())
		}
		return a
	case 't', 'f':
		return s.Bool()
	case 'n':
		s.literal("null")
		return nil
	default:
		f, err := strconv.ParseFloat(s.numberText(), 64)
		if err != nil {
			s.bad = true
			return nil
		}
		return f
	}
}

// Skip validates and passes over one value.
func (s *Skim) Skip() {
	switch c := s.Peek(); c {
	case '"':
		s.str()
	case '{':
		s.Open('{')
		for first := true; s.More('}', &first); {
			s.skipName()
			s.Skip()
		}
	case '[':
		s.Open('[')
		for first := true; s.More(']', &first); {
			s.Skip()
		}
	case 't':
		s.literal("true")
	case 'f':
		s.literal("false")
	case 'n':
		s.literal("null")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			s.number()
			return
		}
		s.bad = true
	}
}

func (s *Skim) literal(lit string) bool {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		s.bad = true
		return false
	}
	s.i += len(lit)
	return true
}

// number passes over -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (s *Skim) number() {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		s.bad = true
		return
	}
	if i < len(b) && b[i] == '.' {
		if j := digits(b, i+1); j > i+1 {
			i = j
		} else {
			s.bad = true
			return
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			s.bad = true
			return
		}
		i = j
	}
	s.i = i
}

// numberText passes over a number and returns its text ("" after a
// failure).
func (s *Skim) numberText() string {
	s.ws()
	start := s.i
	s.number()
	if s.bad {
		return ""
	}
	return string(s.b[start:s.i])
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// str passes over the string that starts at s.i: end is the index of its
// closing quote; esc says it holds an escape, high a byte over 0x7f.
func (s *Skim) str() (end int, esc, high bool) {
	b, i := s.b, s.i+1
	for {
		j, h := transcript.StringStop(b, i)
		high = high || h
		switch {
		case j >= len(b) || b[j] < 0x20:
			s.bad = true
			return j, esc, false
		case b[j] == '"':
			s.i = j + 1
			s.high = s.high || high
			return j, esc, high
		}
		esc = true
		n := escapeLen(b[j:])
		if n == 0 {
			s.bad = true
			return j, esc, false
		}
		i = j + n
	}
}

// escapeLen is the length of the valid escape at the start of b, or 0.
func escapeLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(b) >= 6 && hex4(b[2:6]) >= 0 {
			return 6
		}
	}
	return 0
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return -1
		}
	}
	return r
}

// NearName reports whether key is not one of a struct's names but
// encoding/json could still match it to one of them (norms, each name in
// lower case without '_' or '-'): a name differing only in case, or in
// '_' and '-' (which some decoders ignore), or any name with a byte over
// 0x7f (Unicode case folding). A fast path fails on such a key.
func NearName(key []byte, norms []string) bool {
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return true
		}
	}
	for _, n := range norms {
		if normEqual(key, n) {
			return true
		}
	}
	return false
}

func normEqual(key []byte, norm string) bool {
	j := 0
	for _, c := range key {
		if c == '_' || c == '-' {
			continue
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if j >= len(norm) || norm[j] != c {
			return false
		}
		j++
	}
	return j == len(norm)
}
