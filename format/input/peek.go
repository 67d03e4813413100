package input

import (
	"bytes"
	"encoding/json"
	"io"
	"os"

	"github.com/ctxfold/ctxfold/osfile"
)

// ReadHead reads up to n bytes from the start of the file at path, never
// through a symlink: a file beside the one given (a sub-agent's
// .meta.json, an earlier session's first lines) is read only when it is
// one.
func ReadHead(path string, n int64) ([]byte, error) {
	f, err := osfile.OpenNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}

// EachLineWith calls each with every line of the file at path (never
// through a symlink) that holds one of markers, in file order: a scan of
// a large file for the few lines worth decoding. An unreadable file, or a
// line over the default limit, ends the scan.
func EachLineWith(path string, markers []string, each func(line []byte)) {
	f, err := osfile.OpenNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		return
	}
	defer f.Close()
	lines := NewLines(f, path, Options{})
	for {
		line, err := lines.Next()
		if err != nil {
			return
		}
		for _, m := range markers {
			if bytes.Contains(line, []byte(m)) {
				each(line)
				break
			}
		}
	}
}

// Peek reads up to n bytes of the start and of the end of the file at path
// (the same bytes twice when it is shorter than 2n): what a format's Find
// looks at to describe a session without importing it. It opens no
// symlink's target for writing and reads nothing else.
func Peek(path string, n int) (head, tail []byte, fi os.FileInfo, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, nil, nil, err
	}
	head = make([]byte, n)
	k, err := io.ReadFull(f, head)
	head = head[:k]
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, nil, nil, err
	}
	if fi.Size() <= int64(n) {
		return head, head, fi, nil
	}
	from := max(fi.Size()-int64(n), int64(n))
	tail = make([]byte, fi.Size()-from)
	k, err = f.ReadAt(tail, from)
	if err != nil && err != io.EOF {
		return nil, nil, nil, err
	}
	return head, tail[:k], fi, nil
}

// FirstString is the value of the first "key":"value" member in b that
// keep accepts (nil accepts all), "" when there is none: a cheap look at a
// record's field in a file's head or tail without decoding its lines.
func FirstString(b []byte, key string, keep func(string) bool) string {
	pat := []byte(`"` + key + `"`)
	for i := 0; i < len(b); {
		j := bytes.Index(b[i:], pat)
		if j < 0 {
			return ""
		}
		i += j + len(pat)
		if v, ok := stringAt(b[i:]); ok && v != "" && (keep == nil || keep(v)) {
			return v
		}
	}
	return ""
}

// LastString is FirstString from the end of b.
func LastString(b []byte, key string, keep func(string) bool) string {
	pat := []byte(`"` + key + `"`)
	for end := len(b); end > 0; {
		j := bytes.LastIndex(b[:end], pat)
		if j < 0 {
			return ""
		}
		end = j
		if v, ok := stringAt(b[j+len(pat):]); ok && v != "" && (keep == nil || keep(v)) {
			return v
		}
	}
	return ""
}

// stringAt decodes the JSON string after a member name: optional space, a
// colon, optional space, then the string.
func stringAt(b []byte) (string, bool) {
	b = bytes.TrimLeft(b, " \t")
	if len(b) == 0 || b[0] != ':' {
		return "", false
	}
	b = bytes.TrimLeft(b[1:], " \t")
	if len(b) == 0 || b[0] != '"' {
		return "", false
	}
	for i := 1; i < len(b) && i < 4096; i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			var s string
			if json.Unmarshal(b[:i+1], &s) != nil {
				return "", false
			}
			return s, true
		}
	}
	return "", false
}
