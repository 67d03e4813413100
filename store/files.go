package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/ctxfold/ctxfold/osfile"
	"github.com/ctxfold/ctxfold/transcript"
)

// Session files are opened through these helpers, never with a bare
// os.Open: a named pipe in place of nodes.jsonl would block every reader
// forever, and a symlink would let a writer truncate or append to a file
// outside the session (docs/FORMAT.md §1, "Regular files only").

// openRegular opens path for reading. It never blocks on a FIFO or a
// device (O_NONBLOCK), and refuses anything but a regular file. Readers
// follow a symlink to a regular file; writers never do (checkWritable).
// A missing file is returned as the os error, so callers can test
// errors.Is(err, os.ErrNotExist).
func openRegular(path string) (*os.File, error) { return openRegularNoFollow(path, false) }

// openRegularNoFollow is openRegular that, with noFollow, refuses a
// symlink (O_NOFOLLOW, osfile.OpenNoFollow) for a cache file no reader
// should follow out of the session.
func openRegularNoFollow(path string, noFollow bool) (*os.File, error) {
	var f *os.File
	var err error
	if noFollow {
		f, err = osfile.OpenNoFollow(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	} else {
		f, err = os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	}
	if err != nil {
		return nil, err
	}
	if err := ensureRegular(f, path); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// readRegular is os.ReadFile through openRegular.
func readRegular(path string) ([]byte, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// ReadRegularFile reads a session file for a package outside transcript
// (estimate's cache key reads session.json): like os.ReadFile, but it
// never blocks on a FIFO and refuses anything but a regular file.
func ReadRegularFile(path string) ([]byte, error) { return readRegular(path) }

// openForWrite opens a session file for writing without following a
// symlink (O_NOFOLLOW fails with ELOOP on one) and without blocking on a
// FIFO; the result must be a regular file.
func openForWrite(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := osfile.OpenNoFollow(path, flag|syscall.O_NONBLOCK, perm)
	if errors.Is(err, syscall.ELOOP) {
		return nil, &transcript.ParseError{File: path, Msg: notRegularMsg(os.ModeSymlink), Err: ErrNotRegular}
	}
	if err != nil {
		return nil, err
	}
	if err := ensureRegular(f, path); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func ensureRegular(f *os.File, path string) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return &transcript.ParseError{File: path, Msg: notRegularMsg(st.Mode()), Err: ErrNotRegular}
	}
	return nil
}

// ErrNotRegular is the Err of a *ParseError for a session file that is a
// symlink (when writing), a FIFO, a device, a socket or a directory: the
// file cannot be read or written at all, as opposed to content that does
// not parse.
var ErrNotRegular = errors.New("not a regular file")

func notRegularMsg(mode os.FileMode) string {
	kind := "not a regular file"
	switch {
	case mode&os.ModeSymlink != 0:
		return "is a symlink; ctxfold never writes through a symlink: replace it with a copy of the file it points to"
	case mode&os.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case mode&os.ModeDevice != 0:
		kind = "a device"
	case mode&os.ModeSocket != 0:
		kind = "a socket"
	case mode.IsDir():
		kind = "a directory"
	}
	return fmt.Sprintf("is %s, not a regular file; a session file must be a regular file", kind)
}

// checkWritable refuses, before any lock is taken or byte written, a
// session whose files are symlinks or not regular files, and a lost+found
// that is not a real directory: a writer would otherwise write through
// them (into the file a symlinked lock points to, for one).
func checkWritable(dir string) error {
	for _, name := range []string{MetaFile, NodesFile, EventsFile, LockFile} {
		path := filepath.Join(dir, name)
		st, err := os.Lstat(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return &transcript.ParseError{File: path, Msg: err.Error(), Err: err}
		}
		if !st.Mode().IsRegular() {
			return &transcript.ParseError{File: path, Msg: notRegularMsg(st.Mode()), Err: ErrNotRegular}
		}
	}
	path := filepath.Join(dir, LostFound)
	if st, err := os.Lstat(path); err == nil && !st.IsDir() {
		if st.Mode()&os.ModeSymlink != 0 {
			return &transcript.ParseError{File: path, Msg: "is a symlink; ctxfold keeps recovered bytes only in a real directory: replace it with one"}
		}
		return &transcript.ParseError{File: path, Msg: "is not a directory; ctxfold keeps recovered bytes there"}
	}
	return nil
}

// fileErr is err as a *ParseError naming path, unless it already is one.
func fileErr(path string, err error) error {
	var pe *transcript.ParseError
	if errors.As(err, &pe) {
		return pe
	}
	return &transcript.ParseError{File: path, Msg: err.Error(), Err: err}
}

// OpenCacheFile opens a file ctxfold keeps for itself (a cache under a
// session's cache/, the live cache's state.json and resume.bin) for
// reading: never through a symlink (a link to /dev/zero would read
// forever), never blocking on a FIFO, and only a regular file. A missing
// file is the os error (errors.Is(err, os.ErrNotExist)).
func OpenCacheFile(path string) (*os.File, error) {
	f, err := openRegularNoFollow(path, true)
	if errors.Is(err, syscall.ELOOP) {
		return nil, &transcript.ParseError{File: path, Msg: notRegularMsg(os.ModeSymlink), Err: ErrNotRegular}
	}
	return f, err
}

// ReadCacheFile reads a file through OpenCacheFile, refusing one over
// limit bytes (a cache file is never larger than what it caches, so a
// bigger one is not ours) without reading it.
func ReadCacheFile(path string, limit int64) ([]byte, error) {
	f, err := OpenCacheFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > limit {
		return nil, &transcript.ParseError{File: path, Msg: fmt.Sprintf("is %d bytes, over the %d a cache file of this session may hold", st.Size(), limit)}
	}
	b := make([]byte, st.Size())
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, err
	}
	return b[:n], nil
}
