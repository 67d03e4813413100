package timeline

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/ctxfold/ctxfold/report"
)

// WriteFile writes the page at path atomically (report.WriteFileAtomic:
// a failed run leaves no partial file; the name is replaced, never what
// a symlink points to). An existing name is replaced only when it is a
// regular file that already holds an HTML page: never a symlink, a
// directory or a file of another kind (a transcript given by mistake).
func WriteFile(path string, d *Data) error {
	if err := checkTarget(path); err != nil {
		return err
	}
	return report.WriteFileAtomic(path, func(w io.Writer) error { return WriteHTML(w, d) })
}

func checkTarget(path string) error {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		return &OverwriteError{Path: path, Why: "it is a symlink"}
	case !st.Mode().IsRegular():
		return &OverwriteError{Path: path, Why: "it is not a regular file"}
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	if n == 0 || !isHTML(head[:n]) {
		return &OverwriteError{Path: path, Why: "it exists and is not an HTML page"}
	}
	return nil
}

// isHTML says the bytes start an HTML document.
func isHTML(b []byte) bool {
	b = bytes.ToLower(bytes.TrimLeft(b, " \t\r\n\ufeff"))
	return bytes.HasPrefix(b, []byte("<!doctype html")) || bytes.HasPrefix(b, []byte("<html"))
}
