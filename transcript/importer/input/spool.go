package input

import (
	"errors"
	"io"
	"os"

	"github.com/ctxfold/ctxfold/transcript"
)

// Spool copies every input that is not a regular file (a pipe, /dev/stdin,
// a process substitution) to a temporary file in dir ("" for the system's
// temporary directory), so that a reader may look at a file's first bytes
// to detect its format, or read it twice, without losing what it consumed.
// It returns the paths to read, a map from each copy back to the name the
// user gave (for error messages), and a cleanup that removes the copies.
// Regular files and missing paths are passed through untouched.
func Spool(files []string, dir string) (paths []string, names map[string]string, cleanup func(), err error) {
	names = map[string]string{}
	var tmps []string
	cleanup = func() {
		for _, t := range tmps {
			os.Remove(t)
		}
	}
	for _, path := range files {
		st, serr := os.Stat(path)
		if serr == nil && st.IsDir() {
			return nil, nil, cleanup, &transcript.ParseError{File: path, Msg: "is a directory, not an export file; give the transcript file in it"}
		}
		if serr != nil || st.Mode().IsRegular() {
			paths = append(paths, path) // a missing file is reported when opened
			continue
		}
		in, oerr := os.Open(path)
		if oerr != nil {
			return nil, nil, cleanup, &transcript.ParseError{File: path, Msg: oerr.Error()}
		}
		tmp, terr := os.CreateTemp(dir, ".ctxfold-input-*")
		if terr != nil {
			in.Close()
			return nil, nil, cleanup, &transcript.ParseError{File: path, Msg: "spooling: " + terr.Error()}
		}
		tmps = append(tmps, tmp.Name())
		_, cerr := io.Copy(tmp, in)
		in.Close()
		if err := tmp.Close(); cerr == nil {
			cerr = err
		}
		if cerr != nil {
			return nil, nil, cleanup, &transcript.ParseError{File: path, Msg: "read: " + cerr.Error()}
		}
		names[tmp.Name()] = path
		paths = append(paths, tmp.Name())
	}
	return paths, names, cleanup, nil
}

// RenameError makes a *transcript.ParseError about a spooled copy name the
// input the user gave instead.
func RenameError(err error, names map[string]string) error {
	var pe *transcript.ParseError
	if errors.As(err, &pe) {
		if name, ok := names[pe.File]; ok {
			pe.File = name
		}
	}
	return err
}
