// Package input holds what every vendor importer needs to read an export
// safely: a JSONL line reader with a line-length limit, a bounded JSON
// document decoder whose errors name file:line, and the small conversions
// shared by formats (safe node ids, image references that never carry the
// image bytes), Spool, which copies a piped input to a temporary file, and
// Skim, the validating pull reader behind the importers' fast decode paths.
package input

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/ctxfold/ctxfold/transcript"
)

// Options tune every importer.
type Options struct {
	// MaxLineBytes bounds one JSONL line, and one top-level record of a JSON
	// document (a conversation, a request body); 0 means
	// transcript.DefaultMaxLineBytes. A longer one is a clear error, never an
	// out-of-memory (ctxfold import --max-line-bytes).
	MaxLineBytes int
	// Session picks one conversation (1-based) of a file that holds several
	// (an aider chat history); 0 imports them all (ctxfold import --session).
	Session int
	// SessionID picks one session by the client's own id in a store that
	// holds several (a SQLite database, a data directory); "" with Session
	// 0 imports them all (ctxfold import --session ID). A format that keeps
	// one session per file ignores it.
	SessionID string
	// Latest, with no SessionID, imports only the most recently active
	// session of a store holding several: what the read-only commands
	// (estimate, render, statusline …) read when given the store itself.
	Latest bool
	// MaxDecompressedBytes bounds what a zstd input decompresses to; 0
	// means DefaultMaxDecompressedBytes (ctxfold import
	// --max-decompressed-bytes).
	MaxDecompressedBytes int64
	// Env is where a client's configuration lives (HOME, its env
	// overrides): an importer reads the context window a custom model is
	// configured with there, read-only (transcript.WindowReporter). The
	// zero Env reads no configuration.
	Env Env
}

// Max returns the effective line limit.
func (o Options) Max() int {
	if o.MaxLineBytes <= 0 {
		return transcript.DefaultMaxLineBytes
	}
	return o.MaxLineBytes
}

// Errorf returns a *transcript.ParseError at file:line.
func Errorf(file string, line int, format string, args ...any) error {
	return &transcript.ParseError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// Lines reads a JSONL file one line at a time; blank lines are skipped.
type Lines struct {
	File string
	// Line is the 1-based number of the line Next returned last.
	Line int
	max  int
	br   *bufio.Reader
	eof  bool
	// Unterminated is true when the line Next returned last is the end of
	// the file without a newline: possibly torn by a writer that stopped.
	Unterminated bool
	// raw keeps blank lines and the line's own spaces (a text format, where
	// both carry meaning); only the line ending is removed.
	raw bool
	// Start is the byte offset where the line Next returned last begins,
	// Off where it ends (after its newline): a resumable import's points
	// (resume.go).
	Start, Off int64
}

// NewRawLines reads a text file line by line with the same limits as
// NewLines, but returns blank lines too and strips only "\n" or "\r\n".
func NewRawLines(r io.Reader, file string, opts Options) *Lines {
	l := NewLines(r, file, opts)
	l.raw = true
	return l
}

// NewLines reads r, naming errors after file.
func NewLines(r io.Reader, file string, opts Options) *Lines {
	return &Lines{File: file, max: opts.Max(), br: bufio.NewReaderSize(r, 1<<16)}
}

// NewLinesAt reads r, which is positioned at byte offset off of the file,
// just after its line number line.
func NewLinesAt(r io.Reader, file string, opts Options, off int64, line int) *Lines {
	l := NewLines(r, file, opts)
	l.Start, l.Off, l.Line = off, off, line
	return l
}

// Next returns the next non-blank line without its newline, or io.EOF.
// A line over the limit or with invalid UTF-8 is a *transcript.ParseError.
func (l *Lines) Next() ([]byte, error) {
	for !l.eof {
		l.Line++
		l.Unterminated = false
		l.Start = l.Off
		var out []byte
		for {
			chunk, err := l.br.ReadSlice('\n')
			if len(out)+len(chunk) > l.max+1 {
				return nil, Errorf(l.File, l.Line, "line is longer than the %d-byte limit (raise it with --max-line-bytes)", l.max)
			}
			l.Off += int64(len(chunk))
			out = append(out, chunk...)
			if err == bufio.ErrBufferFull {
				continue
			}
			if err == io.EOF {
				l.eof = true
				l.Unterminated = true
			} else if err != nil {
				return nil, Errorf(l.File, l.Line, "read: %v", err)
			}
			break
		}
		body := bytes.TrimSpace(out)
		if l.raw {
			if l.eof && len(out) == 0 {
				break
			}
			body = bytes.TrimSuffix(bytes.TrimSuffix(out, []byte("\n")), []byte("\r"))
			if !utf8.Valid(body) {
				return nil, Errorf(l.File, l.Line, "invalid UTF-8")
			}
			return body, nil
		}
		if len(body) == 0 {
			continue
		}
		if pos := transcript.FirstInvalidUTF8(out); pos > 0 {
			return nil, Errorf(l.File, l.Line, "%s", transcript.InvalidUTF8Msg(pos))
		}
		return body, nil
	}
	return nil, io.EOF
}

// Errorf returns a ParseError at the current line.
func (l *Lines) Errorf(format string, args ...any) error {
	return Errorf(l.File, l.Line, format, args...)
}

// Unmarshal decodes the current line into v; a failure names file:line
// and what was expected.
func (l *Lines) Unmarshal(line []byte, v any, what string) error {
	if err := Unmarshal(line, v); err != nil {
		return l.Errorf("expected %s: %s", what, JSONErrorText(err))
	}
	return nil
}

// JSONErrorText is a one-line description of a decoding error.
func JSONErrorText(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("invalid JSON: %s", se.Error())
	case errors.As(err, &te):
		want := "another type"
		if te.Type != nil {
			want = kindName(te.Type.Kind())
		}
		if te.Field != "" {
			return fmt.Sprintf("field %q: got a JSON %s, expected %s", te.Field, te.Value, want)
		}
		return fmt.Sprintf("got a JSON %s, expected %s", te.Value, want)
	}
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

func kindName(k reflect.Kind) string {
	switch k {
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Pointer, reflect.Interface:
		return "a value"
	}
	return "a number"
}

var errTooLong = errors.New("record too long")

// CheckUTF8 applies docs/FORMAT.md §7's one rule to data, a whole file
// read at once (a format stored as one small JSON file per record): nil
// when it is valid UTF-8, else a ParseError naming file, line and byte.
// encoding/json would otherwise replace invalid bytes with U+FFFD.
func CheckUTF8(file string, data []byte) error {
	pos := transcript.FirstInvalidUTF8(data)
	if pos == 0 {
		return nil
	}
	before := data[:pos-1]
	line := 1 + bytes.Count(before, []byte{'\n'})
	col := pos - (bytes.LastIndexByte(before, '\n') + 1)
	return Errorf(file, line, "%s", transcript.InvalidUTF8Msg(col))
}

// utf8Reader passes on only valid UTF-8 and fails with a ParseError naming
// the line and byte of the first invalid one. encoding/json would replace
// it with U+FFFD in silence; every import format instead follows the one
// rule of docs/FORMAT.md §7, the line-based ones through Lines.Next.
type utf8Reader struct {
	r    io.Reader
	file string
	// line is the line of pending[0]; col its 0-based byte in that line.
	line, col int
	// pending are bytes read and not passed on yet, the first checked of
	// them known to be valid whole runes.
	pending []byte
	checked int
	buf     []byte
	eof     bool
	err     error
}

func (u *utf8Reader) Read(p []byte) (int, error) {
	for {
		if u.err != nil {
			return 0, u.err
		}
		if len(p) == 0 {
			return 0, nil
		}
		if u.checked > 0 {
			n := copy(p, u.pending[:u.checked])
			out := u.pending[:n]
			if k := bytes.Count(out, []byte{'\n'}); k > 0 {
				u.line += k
				u.col = n - 1 - bytes.LastIndexByte(out, '\n')
			} else {
				u.col += n
			}
			u.pending, u.checked = u.pending[n:], u.checked-n
			return n, nil
		}
		// Check the prefix that holds only whole runes; a rune split by
		// the underlying read waits for its remaining bytes.
		cut := len(u.pending)
		if !u.eof {
			for k := 1; k <= 3 && k <= cut; k++ {
				if b := u.pending[cut-k]; b&0xC0 != 0x80 {
					if !utf8.FullRune(u.pending[cut-k:]) {
						cut -= k
					}
					break
				}
			}
		}
		if pos := transcript.FirstInvalidUTF8(u.pending[:cut]); pos > 0 {
			line, col := u.line, u.col
			for _, b := range u.pending[:pos-1] {
				col++
				if b == '\n' {
					line, col = line+1, 0
				}
			}
			u.err = Errorf(u.file, line, "%s", transcript.InvalidUTF8Msg(col+1))
			return 0, u.err
		}
		if cut > 0 {
			u.checked = cut
			continue
		}
		if u.eof {
			return 0, io.EOF
		}
		// Refill: the few bytes of a split rune move to the front of the
		// one read buffer, the read goes after them.
		if u.buf == nil {
			u.buf = make([]byte, 64<<10)
		}
		k := copy(u.buf, u.pending)
		n, err := u.r.Read(u.buf[k:])
		u.pending = u.buf[:k+n]
		if err == io.EOF {
			u.eof = true
		} else if err != nil {
			return 0, err
		}
	}
}

// countingReader fails once more than limit bytes have been read since the
// last mark, bounding the memory one record can take.
type countingReader struct {
	r      io.Reader
	n      int64
	markAt int64
	limit  int64
}

func (c *countingReader) mark() { c.markAt = c.n }

func (c *countingReader) Read(p []byte) (int, error) {
	if c.n-c.markAt > c.limit {
		return 0, errTooLong
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// ID returns s as a node id that cannot collide with the ids reserved for
// summary nodes (docs/FORMAT.md §4) or be empty; fallback is used when s is empty.
// An id read from a SQLite column may hold bytes that are not UTF-8; they
// become U+FFFD here, once, because JSON would replace them on the way into
// the store and the id would no longer match the references to it
// (a summary's covers_ids, a successor's predecessor).
func ID(s, fallback string) string {
	if s == "" {
		s = fallback
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	if strings.HasPrefix(s, transcript.SummaryIDPrefix) {
		return "x" + s
	}
	return s
}

// Image returns an image block referencing the image without its bytes:
// a URL stays a URL; inline data (a data: URL or base64) becomes a
// sha256 digest with its size, since a session must never hold the bytes.
func Image(url, mediaType, base64Data string) transcript.Block {
	b := transcript.Block{Type: transcript.BlockImage, MediaType: mediaType}
	if strings.HasPrefix(url, "data:") {
		header, data, _ := strings.Cut(strings.TrimPrefix(url, "data:"), ",")
		mt, _, _ := strings.Cut(header, ";")
		if b.MediaType == "" {
			b.MediaType = mt
		}
		base64Data, url = data, ""
	}
	if url != "" {
		b.Source = url
		return b
	}
	raw, err := base64.StdEncoding.DecodeString(base64Data)
	if err != nil {
		raw = []byte(base64Data)
	}
	sum := sha256.Sum256(raw)
	b.Source = "sha256:" + hex.EncodeToString(sum[:])
	b.Extra = map[string]json.RawMessage{"bytes": json.RawMessage(fmt.Sprint(len(raw)))}
	return b
}

// Text is a JSON value read as text: a string as is, anything else as its
// compact JSON.
func Text(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		return buf.String()
	}
	return string(raw)
}

// Raw encodes v, for metadata values known to be encodable.
func Raw(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// ChainIDs names the nodes of a conversation that carries no ids (a request
// body): each id hashes every message up to it, so re-importing the same
// conversation, or a longer one with the same start, yields the same ids
// (an --append adds only the new messages), while another conversation's
// ids differ and cannot be mistaken for these.
type ChainIDs struct{ sum [32]byte }

// Next returns the id of the message whose JSON is raw: label, '-' and 8
// hex digits.
func (c *ChainIDs) Next(label string, raw []byte) string {
	var compact bytes.Buffer
	if json.Compact(&compact, raw) == nil {
		raw = compact.Bytes()
	}
	h := sha256.New()
	h.Write(c.sum[:])
	h.Write(raw)
	copy(c.sum[:], h.Sum(nil))
	return label + "-" + hex.EncodeToString(c.sum[:4])
}
