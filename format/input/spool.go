package input

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/ctxfold/ctxfold/transcript"
)

// zstdMagic starts every zstd frame (RFC 8878 §3.1.1).
var zstdMagic = []byte{0x28, 0xB5, 0x2F, 0xFD}

// maxWindow bounds the memory a zstd frame may ask the decoder for; Codex
// writes its rollouts with the default level, whose window is far smaller.
const maxWindow = 128 << 20

// Spool copies every input that is not a regular file (a pipe, /dev/stdin,
// a process substitution) to a temporary file in dir ("" for the system's
// temporary directory), so that a reader may look at a file's first bytes
// to detect its format, or read it twice, without losing what it consumed.
// It returns the paths to read, a map from each copy back to the name the
// user gave (for error messages), and a cleanup that removes the copies.
// A zstd-compressed file (by its magic number, whatever its name) is
// decompressed to a temporary file the same way. Regular files,
// directories and missing paths are passed through untouched.
func Spool(files []string, dir string) (paths []string, names map[string]string, cleanup func(), err error) {
	return SpoolLimit(files, dir, 0)
}

// DefaultMaxDecompressedBytes bounds what a zstd input may decompress to
// (ctxfold import --max-decompressed-bytes): a 134 KB file can hold 4 GB
// of zeros, which would otherwise be written to disk before any check.
const DefaultMaxDecompressedBytes = 1 << 30

// SpoolLimit is Spool with the decompressed size of a zstd input bounded
// by maxDecompressed bytes (DefaultMaxDecompressedBytes when 0). Every
// temporary it makes is locked until cleanup (stale.go), so a later
// import can tell a killed import's leftovers from a running one's.
func SpoolLimit(files []string, dir string, maxDecompressed int64) (paths []string, names map[string]string, cleanup func(), err error) {
	if maxDecompressed <= 0 {
		maxDecompressed = DefaultMaxDecompressedBytes
	}
	names = map[string]string{}
	var tmps []string
	var locks []*TempLock
	cleanup = func() {
		for _, t := range tmps {
			os.RemoveAll(t)
		}
		for _, l := range locks {
			l.Release()
		}
	}
	for _, path := range files {
		st, serr := os.Stat(path)
		if serr == nil && st.Mode().IsRegular() && isZstd(path) {
			out, tmp, lock, err := decompress(path, dir, maxDecompressed)
			if tmp != "" {
				tmps, locks = append(tmps, tmp), append(locks, lock)
			}
			if err != nil {
				return nil, nil, cleanup, err
			}
			names[out] = path
			paths = append(paths, out)
			continue
		}
		if serr != nil || st.Mode().IsRegular() || st.IsDir() {
			// A missing file is reported when opened; a directory (a
			// format laid out as one) is read in place.
			paths = append(paths, path)
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
		tmps, locks = append(tmps, tmp.Name()), append(locks, LockTemp(tmp.Name()))
		_, cerr := io.Copy(tmp, in)
		in.Close()
		if err := tmp.Close(); cerr == nil {
			cerr = err
		}
		if cerr != nil {
			return nil, nil, cleanup, &transcript.ParseError{File: path, Msg: "read: " + cerr.Error()}
		}
		names[tmp.Name()] = path
		if isZstd(tmp.Name()) {
			// A compressed rollout piped in: spooled, then decompressed.
			out, dtmp, lock, err := decompress(tmp.Name(), dir, maxDecompressed)
			if dtmp != "" {
				tmps, locks = append(tmps, dtmp), append(locks, lock)
			}
			if err != nil {
				return nil, nil, cleanup, RenameError(err, names)
			}
			names[out] = path
			paths = append(paths, out)
			continue
		}
		paths = append(paths, tmp.Name())
	}
	return paths, names, cleanup, nil
}

func isZstd(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(zstdMagic))
	n, _ := io.ReadFull(f, head)
	return n == len(zstdMagic) && bytes.Equal(head, zstdMagic)
}

// decompress writes the zstd file at path, decompressed, into a new
// temporary directory in dir under the file's name without ".zst" (an
// importer may name a conversation after its file), so every importer
// reads a compressed export as if it were plain (Codex's rollout-*.jsonl.zst).
// It returns the decompressed file, the directory to remove and its lock.
// More than limit bytes decompressed is an error, found before more than
// limit bytes are written.
func decompress(path, dir string, limit int64) (string, string, *TempLock, error) {
	outPath, tmp, lock := "", "", (*TempLock)(nil)
	in, err := os.Open(path)
	if err != nil {
		return "", "", nil, &transcript.ParseError{File: path, Msg: err.Error(), Err: err}
	}
	defer in.Close()
	if tmp, err = os.MkdirTemp(dir, ".ctxfold-input-*"); err != nil {
		return "", "", nil, &transcript.ParseError{File: path, Msg: "decompressing: " + err.Error(), Err: err}
	}
	lock = LockTemp(tmp)
	outPath, err = decompressInto(in, path, tmp, limit)
	return outPath, tmp, lock, err
}

// decompressInto writes the zstd stream in (of the file at path) into a
// file in tmp, at most limit bytes.
func decompressInto(in io.Reader, path, tmp string, limit int64) (string, error) {
	name := strings.TrimSuffix(filepath.Base(path), ".zst")
	if name == "" || strings.HasPrefix(name, ".ctxfold-input-") {
		name = "input"
	}
	outPath := filepath.Join(tmp, name)
	out, err := os.OpenFile(outPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", &transcript.ParseError{File: path, Msg: "decompressing: " + err.Error(), Err: err}
	}
	dec, err := zstd.NewReader(in, zstd.WithDecoderMaxWindow(maxWindow), zstd.WithDecoderConcurrency(1))
	if err != nil {
		out.Close()
		return "", &transcript.ParseError{File: path, Line: 1, Msg: "not a readable zstd stream: " + err.Error()}
	}
	n, cerr := io.Copy(out, io.LimitReader(dec, limit+1))
	dec.Close()
	if err := out.Close(); cerr == nil {
		cerr = err
	}
	if cerr != nil {
		return "", &transcript.ParseError{File: path, Line: 1, Msg: "zstd: " + strings.ReplaceAll(cerr.Error(), "\n", " ")}
	}
	if n > limit {
		return "", &transcript.ParseError{File: path, Msg: fmt.Sprintf("decompresses to more than %d bytes; a transcript that large is unlikely (raise the limit with --max-decompressed-bytes)", limit)}
	}
	return outPath, nil
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
