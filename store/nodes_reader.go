package store

import (
	"os"
	"path/filepath"
)

// NodesReader is a session's nodes.jsonl opened for a reader that takes
// committed bytes itself instead of through an index: estimate's
// incremental run reads only what was appended after its stored basis,
// search streams every line in file order. The store is still the one
// that opens the file: never blocking on a FIFO, refusing anything but a
// regular file, as every session file is opened.
type NodesReader struct {
	f  *os.File
	st os.FileInfo
}

// OpenNodes opens dir's nodes.jsonl for reading.
func OpenNodes(dir string) (*NodesReader, error) {
	f, err := openRegular(filepath.Join(dir, NodesFile))
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &NodesReader{f: f, st: st}, nil
}

// Stat is the file's stat when it was opened (size and identity).
func (r *NodesReader) Stat() os.FileInfo { return r.st }

// Name is the path of the file read (a finding names it).
func (r *NodesReader) Name() string { return r.f.Name() }

// Read reads from the current position (a sequential scan).
func (r *NodesReader) Read(p []byte) (int, error) { return r.f.Read(p) }

// ReadAt reads len(p) bytes at off.
func (r *NodesReader) ReadAt(p []byte, off int64) (int, error) { return r.f.ReadAt(p, off) }

// Close closes the file.
func (r *NodesReader) Close() error { return r.f.Close() }

// StatNodes is the stat of dir's nodes.jsonl (estimate keys its caches on
// its size and time).
func StatNodes(dir string) (os.FileInfo, error) { return os.Stat(filepath.Join(dir, NodesFile)) }

// ReadMetaBytes is dir's session.json as stored, unparsed (estimate keys
// its caches on the bytes).
func ReadMetaBytes(dir string) ([]byte, error) { return readRegular(filepath.Join(dir, MetaFile)) }
