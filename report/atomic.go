package report

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteFileAtomic writes the file at path through fn: into a temporary
// file in the same directory, synced and renamed into place only when fn
// succeeded. A failed or interrupted run leaves no partial file, and an
// existing file at path untouched. Commands use it for every output file
// they are asked to write (graph -o, render --json-report). fn's error is
// returned as it is; a file-system failure names path (not the temporary
// file).
func WriteFileAtomic(path string, fn func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return pathError(path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = fn(tmp); err != nil {
		return err
	}
	if err = tmp.Chmod(0o644); err != nil {
		return pathError(path, err)
	}
	if err = tmp.Sync(); err != nil {
		return pathError(path, err)
	}
	if err = tmp.Close(); err != nil {
		return pathError(path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return pathError(path, err)
	}
	return nil
}

// pathError restates an *os.PathError or *os.LinkError about the
// temporary file as one about path.
func pathError(path string, err error) error {
	var pe *os.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return fmt.Errorf("%s: %w", path, err)
}
