package store

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// AtomicOptions configure WriteFileAtomic.
type AtomicOptions struct {
	// Perm is the file's mode (0: 0644, readable like the session's own
	// files; CreateTemp alone makes 0600).
	Perm fs.FileMode
	// Sync makes the write durable: the file is fsynced before the
	// rename and its directory after it, so a crash leaves either the old
	// or the new file. Caches leave it off: a lost cache is only cold.
	Sync bool
	// NoClobber refuses an existing name (a symlink included) atomically:
	// the file is linked into place, which fails when the name is taken,
	// with an error that is fs.ErrExist. Without it the name is replaced —
	// a symlink itself, never what it points to.
	NoClobber bool
}

// WriteFileAtomic writes the file at path through fn: into a temporary
// file in the same directory (".NAME.tmp-*"), moved into place only when
// fn succeeded, so a failed or interrupted run leaves no partial file and
// an existing file at path untouched. It is the one atomic write of the
// tree: session.json, lost+found/, the estimate and fit caches, command
// output files and exported transcripts. fn's error is returned as it
// is; a file-system failure names path, not the temporary file.
func WriteFileAtomic(path string, o AtomicOptions, fn func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return pathError(path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(tmp, 1<<16)
	if err = fn(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return pathError(path, err)
	}
	perm := o.Perm
	if perm == 0 {
		perm = 0o644
	}
	if err = tmp.Chmod(perm); err != nil {
		return pathError(path, err)
	}
	if o.Sync {
		if err = tmp.Sync(); err != nil {
			return pathError(path, err)
		}
	}
	if err = tmp.Close(); err != nil {
		return pathError(path, err)
	}
	if o.NoClobber {
		if err = os.Link(tmp.Name(), path); err != nil {
			return pathError(path, err)
		}
		// The name is ours; the temporary one goes (err stays nil).
		os.Remove(tmp.Name())
	} else if err = os.Rename(tmp.Name(), path); err != nil {
		return pathError(path, err)
	}
	if o.Sync {
		if err := syncDir(dir); err != nil {
			return pathError(path, err)
		}
	}
	return nil
}

// WriteBytesAtomic is WriteFileAtomic of data.
func WriteBytesAtomic(path string, o AtomicOptions, data []byte) error {
	return WriteFileAtomic(path, o, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
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

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
