package report

import (
	"io"

	"github.com/ctxfold/ctxfold/store"
)

// WriteFileAtomic writes the file at path through fn, synced, with
// store.WriteFileAtomic: a failed or interrupted run leaves no
// partial file, and an existing file at path untouched. Commands use it
// for every output file they are asked to write (graph -o, render
// --json-report). fn's error is returned as it is; a file-system failure
// names path (not the temporary file).
func WriteFileAtomic(path string, fn func(io.Writer) error) error {
	return store.WriteFileAtomic(path, store.AtomicOptions{Sync: true}, fn)
}
