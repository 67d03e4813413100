// Doc: the bounded, streaming JSON document decoder, for formats that
// export one big JSON value instead of JSONL; kept apart from the line
// reader because it tracks lines differently (by byte offset, after the
// fact).

package input

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"

	"github.com/ctxfold/ctxfold/transcript"
)

// Doc decodes a JSON document (a conversations.json, a request body)
// streaming, value by value: no single value read with Value may exceed
// the limit, so a huge export costs the memory of its largest record.
// Errors name file:line.
type Doc struct {
	File string
	f    *os.File
	cr   *countingReader
	dec  *json.Decoder
	max  int
	// First is the first non-space byte of the document ('[' or '{').
	First byte
	// start is the offset where the value being decoded starts; base the
	// bytes skipped before the decoder (a byte-order mark, spaces).
	start, base int64
}

// OpenDoc opens a JSON document.
func OpenDoc(path string, opts Options) (*Doc, error) { return OpenDocAfter(path, opts, nil) }

// OpenDocAfter opens a JSON document that may follow one status line a
// client's CLI printed into the same file (OpenCode's "Exporting session:
// …" lands in `opencode export ID > file` on some versions and shells):
// when lead matches at the start of the file, its bytes are skipped. Line
// numbers still count from the file's first line.
func OpenDocAfter(path string, opts Options, lead *regexp.Regexp) (*Doc, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &transcript.ParseError{File: path, Msg: err.Error()}
	}
	d := &Doc{File: path, f: f, max: opts.Max()}
	d.cr = &countingReader{r: &utf8Reader{r: f, file: path, line: 1}, limit: int64(d.max) + 1<<16}
	br := bufio.NewReader(d.cr)
	skipped := 0
	if lead != nil {
		head, _ := br.Peek(512)
		if m := lead.FindIndex(head); m != nil && m[0] == 0 {
			br.Discard(m[1])
			skipped = m[1]
		}
	}
	for {
		b, err := br.ReadByte()
		var pe *transcript.ParseError
		if errors.As(err, &pe) {
			f.Close()
			return nil, pe
		}
		if err != nil {
			f.Close()
			return nil, Errorf(path, 1, "empty file; expected a JSON document")
		}
		if b == ' ' || b == '\n' || b == '\r' || b == '\t' {
			skipped++
			continue
		}
		if b == 0xEF && skipped == 0 {
			if rest, _ := br.Peek(2); bytes.Equal(rest, []byte{0xBB, 0xBF}) {
				br.Discard(2)
				skipped += 3
				continue
			}
		}
		d.First = b
		br.UnreadByte()
		break
	}
	d.dec = json.NewDecoder(br)
	d.base = int64(skipped)
	return d, nil
}

// Close releases the file.
func (d *Doc) Close() error { return d.f.Close() }

// Value decodes the next value into v; what names it for errors.
func (d *Doc) Value(v any, what string) error {
	d.start = d.dec.InputOffset()
	d.cr.mark()
	if err := d.dec.Decode(v); err != nil {
		return d.wrap(err, what)
	}
	// The reader bounds memory (limit plus read-ahead); this makes the
	// limit exact.
	if d.dec.InputOffset()-d.start > int64(d.max) {
		return d.wrap(errTooLong, what)
	}
	return nil
}

// Skip consumes the next value.
func (d *Doc) Skip(what string) error {
	var raw json.RawMessage
	return d.Value(&raw, what)
}

// Each walks the array that comes next, calling fn for each element; fn
// must consume it (Value or Skip).
func (d *Doc) Each(what string, fn func(i int) error) error {
	if err := d.delim('[', "an array of "+what); err != nil {
		return err
	}
	for i := 0; d.dec.More(); i++ {
		if err := fn(i); err != nil {
			return err
		}
	}
	return d.delim(']', "the end of the array of "+what)
}

// Fields walks the object that comes next, calling fn with each key; fn
// must consume the value (Value, Skip or Each).
func (d *Doc) Fields(what string, fn func(key string) error) error {
	if err := d.delim('{', what); err != nil {
		return err
	}
	for d.dec.More() {
		d.start = d.dec.InputOffset()
		tok, err := d.dec.Token()
		if err != nil {
			return d.wrap(err, what)
		}
		key, ok := tok.(string)
		if !ok {
			return d.wrap(errors.New("expected a key"), what)
		}
		if err := fn(key); err != nil {
			return err
		}
	}
	return d.delim('}', "the end of "+what)
}

// End checks that nothing follows the document.
func (d *Doc) End() error {
	d.start = d.dec.InputOffset()
	if _, err := d.dec.Token(); err != io.EOF {
		if err == nil {
			err = errors.New("unexpected data after the document")
		}
		return d.wrap(err, "the end of the file")
	}
	return nil
}

func (d *Doc) delim(want json.Delim, what string) error {
	d.start = d.dec.InputOffset()
	tok, err := d.dec.Token()
	if err != nil {
		return d.wrap(err, what)
	}
	if tok != want {
		return Errorf(d.File, d.lineAt(d.start, true), "expected %s, got %s", what, tokenText(tok))
	}
	return nil
}

func tokenText(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return "an object"
		}
		if t == '[' {
			return "an array"
		}
		return fmt.Sprintf("%q", string(t))
	case string:
		return "a string"
	case nil:
		return "null"
	case bool:
		return "a boolean"
	}
	return "a number"
}

// Line is the line where the value decoded last starts.
func (d *Doc) Line() int { return d.lineAt(d.start, true) }

// Errorf returns a ParseError at the line of the value decoded last.
func (d *Doc) Errorf(format string, args ...any) error {
	return Errorf(d.File, d.Line(), format, args...)
}

func (d *Doc) wrap(err error, what string) error {
	var pe *transcript.ParseError
	if errors.As(err, &pe) {
		return pe // invalid UTF-8, from utf8Reader
	}
	if errors.Is(err, errTooLong) {
		return Errorf(d.File, d.lineAt(d.start, true), "%s is longer than the %d-byte limit (raise it with --max-line-bytes)", what, d.max)
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	msg := JSONErrorText(err)
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		msg = "unexpected end of file"
	}
	line := d.lineAt(d.dec.InputOffset(), false)
	switch {
	case errors.As(err, &se):
		// The decoder reports syntax errors at an offset into the stream.
		line = d.lineAt(se.Offset, false)
	case errors.As(err, &te):
		// Type errors are reported relative to the start of the value.
		line = d.lineAfter(d.start, te.Offset)
	}
	return Errorf(d.File, line, "expected %s: %s", what, msg)
}

// lineAfter is the line of the byte rel bytes into the value decoded from
// off: json.Decoder reports type errors relative to its value buffer,
// which starts after the ',' or ':' that separates the value (when there
// is one) and includes the white space before it.
func (d *Doc) lineAfter(off, rel int64) int {
	f, err := os.Open(d.File)
	if err != nil {
		return 0
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, off+d.base+rel+int64(d.max)+1<<16))
	if err != nil {
		return 0
	}
	pos := min(off+d.base, int64(len(data)))
	p := pos
	for p < int64(len(data)) && (data[p] == ' ' || data[p] == '\t' || data[p] == '\r' || data[p] == '\n') {
		p++
	}
	if p < int64(len(data)) && (data[p] == ',' || data[p] == ':') {
		pos = p + 1
	}
	end := min(pos+rel, int64(len(data)))
	return 1 + bytes.Count(data[:end], []byte("\n"))
}

// lineAt counts newlines before the document offset off by re-reading the
// file (only on the error path); with skip, the separators after off
// (space, ',' and ':') count too, so the line is the value's own.
func (d *Doc) lineAt(off int64, skip bool) int {
	f, err := os.Open(d.File)
	if err != nil {
		return 0
	}
	defer f.Close()
	br := bufio.NewReader(f)
	line := 1
	for i := int64(0); ; i++ {
		b, err := br.ReadByte()
		if err != nil {
			return line
		}
		if i >= off+d.base {
			if !skip || !(b == ' ' || b == '\t' || b == '\r' || b == '\n' || b == ',' || b == ':') {
				return line
			}
		}
		if b == '\n' {
			line++
		}
	}
}
