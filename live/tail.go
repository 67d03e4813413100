// This file keeps a cache session of a transcript's tail: the last bytes of
// a big Claude Code file, copied beside the cache and imported on their
// own, so that the status line answers from what follows the latest
// recorded requests without importing the whole history (docs/LIVE.md,
// "The tail").

package live

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/osfile"
	"github.com/ctxfold/ctxfold/store"
)

// TailEntry is the cache session of a transcript's tail (OpenTail).
type TailEntry struct {
	// Entry is the live entry of the tail's copy: its Session is what an
	// estimate reads.
	*Entry
	// Transcript is the transcript's absolute path; Start the offset of the
	// line the tail starts at, Size how much of the file it holds.
	Transcript string
	Start      int64
	Size       int64
	// TailUpdate says how this Open brought the tail up to date
	// (Unchanged, Appended or Fresh).
	TailUpdate string
	// PrefixCompactions counts Claude Code's compaction boundaries in the
	// bytes before Start, which the tail's session does not hold;
	// Compactions those in all of the file's complete lines. A boundary
	// that is the tail's first conversation line has nothing before it in
	// the tail's session, which therefore holds no summary for it: the
	// bytes, not the tail's summaries, say how many there are.
	PrefixCompactions int
	Compactions       int
}

// ErrTailUnsupported: only Claude Code files have a tail session.
var ErrTailUnsupported = errors.New("the tail read supports Claude Code transcripts only")

// tailState is the tail directory's tail.json.
type tailState struct {
	Version           int    `json:"schema_version"`
	File              string `json:"file"`
	Dev               uint64 `json:"dev,omitempty"`
	Inode             uint64 `json:"inode,omitempty"`
	Start             int64  `json:"start"`
	Size              int64  `json:"size"`
	TailHash          string `json:"tail_xxh64"`
	SeamHash          string `json:"seam_xxh64"`
	PrefixCompactions int    `json:"prefix_compactions"`
	// PrefixCheck binds PrefixCompactions to the bytes it was counted in
	// (prefixCheck): the count is not checked against the file on every
	// Open, as the hashes are, so an edited or corrupted count must not be
	// taken (issue 45: "↻-3", "↻999" shown and kept while the file grew).
	PrefixCheck string `json:"prefix_check"`
	// Copied is the length the copy was made with (at least what was
	// asked; more when the line it starts at is long): a tail that had to
	// be long stays while it grows, whatever shorter length is asked first.
	Copied int64 `json:"copied,omitempty"`
}

const (
	tailStateVersion = 1
	tailStateFile    = "tail.json"
	tailCopyFile     = "tail.jsonl"
	// tailSeam is how many bytes before Start are checked on every Open,
	// so a file edited just before its tail is not taken for a grown one.
	tailSeam = 4096
)

// A tail longer than tailRebase and tailRebaseFactor times the bytes asked
// for starts again from the end of the file (a variable: tests lower it).
var tailRebase int64 = 16 << 20

const tailRebaseFactor = 8

// compactBoundary is how a Claude Code compaction boundary's subtype is
// written; a string inside a JSON value has its quotes escaped, so only
// the key itself matches.
var compactBoundary = []byte(`"subtype":"compact_boundary"`)

// TailDir is where the tail of the file at abs is kept.
func TailDir(cacheDir, abs string) string { return EntryDir(cacheDir, abs) + ".tail" }

// OpenTail brings the tail session of file up to date: at least minBytes
// of its end (the whole file when smaller), starting at a line. A file
// that only grew since the last Open has its new bytes appended to the
// copy, which the copy's live entry imports incrementally; a file whose
// tail or the bytes just before it changed, a tail shorter than
// minBytes, or one grown past 16 MiB and 8 × the longer of minBytes and
// the length it was copied with, is copied afresh. When the copy does not
// import, the error comes with the tail's extent (te without Entry).
func OpenTail(ctx context.Context, file string, opts Options, minBytes int64) (*TailEntry, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	if opts.CacheDir == "" {
		if opts.CacheDir, err = DefaultCacheDir(); err != nil {
			return nil, err
		}
	}
	format, err := importer.DetectFile(abs)
	if err != nil {
		return nil, err
	}
	if format != importer.ClaudeCode {
		return nil, ErrTailUnsupported
	}
	dir := TailDir(opts.CacheDir, abs)
	if st, err := os.Lstat(dir); err == nil && !st.IsDir() {
		// Not what ctxfold made (a symlink, a file): the cache is ours, so
		// it goes, and nothing is written where a link points.
		if err := os.RemoveAll(dir); err != nil {
			return nil, fmt.Errorf("cache: %w", err)
		}
	}
	lock, err := lockLiveEntry(ctx, dir, opts.LockTimeout)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	touch(dir)
	te, err := syncTail(abs, dir, minBytes)
	if err != nil {
		return nil, err
	}
	// The copy is detected as the whole file is, so a tail that is the
	// whole file imports as the full path does.
	e, err := Open(ctx, filepath.Join(dir, tailCopyFile), opts)
	if err != nil {
		// A tail that starts inside the file may hold no conversation yet
		// (only snapshots and progress lines): te says where it started.
		return te, err
	}
	te.Entry = e
	return te, nil
}

// syncTail brings the copy in dir up to the file at abs.
func syncTail(abs, dir string, minBytes int64) (*TailEntry, error) {
	in, err := openInput(abs)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	copyPath := filepath.Join(dir, tailCopyFile)
	old, ok := readTailState(dir)
	// A tail that grew far past what was asked is copied afresh, so the
	// copy and its session stay small however long the client writes.
	// The length it was copied with counts too: estimate.FromTail asks
	// for a short tail first on every call, and a tail that had to be
	// longer would be copied again, four times longer each time, on every
	// call after an append — and one starting at a long line on every
	// call.
	bounded := size-old.Start <= max(tailRebase, tailRebaseFactor*max(minBytes, old.Copied))
	if ok && old.File == abs && old.Size <= size && old.Start <= max(0, size-minBytes) && bounded && sameFile(st, old) {
		if grown, err := extendTail(in, copyPath, old, size); err == nil {
			if err := writeTailState(dir, grown); err != nil {
				return nil, err
			}
			update := Appended
			if grown.Size == old.Size {
				update = Unchanged
			}
			return countCompactions(in, &TailEntry{Transcript: abs, Start: grown.Start, Size: grown.Size, TailUpdate: update, PrefixCompactions: grown.PrefixCompactions})
		}
	}
	ns, err := freshTail(in, copyPath, abs, size, minBytes)
	if err != nil {
		return nil, err
	}
	if id, ok := osfile.IdentityOf(st); ok {
		ns.Dev, ns.Inode = id.Dev, id.Ino
	}
	if err := writeTailState(dir, ns); err != nil {
		return nil, err
	}
	return countCompactions(in, &TailEntry{Transcript: abs, Start: ns.Start, Size: ns.Size, TailUpdate: Fresh, PrefixCompactions: ns.PrefixCompactions})
}

func sameFile(st os.FileInfo, s tailState) bool {
	id, ok := osfile.IdentityOf(st)
	return !ok || (id.Dev == s.Dev && id.Ino == s.Inode)
}

// countCompactions sets te.Compactions: the compaction boundaries in the
// file's complete lines, those before the tail and those in it up to its
// last newline (a line still being written is not imported yet).
func countCompactions(in *os.File, te *TailEntry) (*TailEntry, error) {
	end, err := lineStartBefore(in, te.Size)
	if err != nil {
		return nil, err
	}
	n, err := countIn(in, te.Start, max(te.Start, end), compactBoundary)
	te.Compactions = te.PrefixCompactions + n
	return te, err
}

// errTailChanged: the copied bytes are not the file's any more.
var errTailChanged = errors.New("the tail changed")

// extendTail checks that the file still holds the copied tail and the
// seam before it, then appends the file's new bytes to the copy.
func extendTail(in *os.File, copyPath string, s tailState, size int64) (tailState, error) {
	seam, err := hashRange(in, max(0, s.Start-tailSeam), s.Start)
	if err != nil || seam != s.SeamHash {
		return s, errTailChanged
	}
	tail, err := hashRange(in, s.Start, s.Size)
	if err != nil || tail != s.TailHash {
		return s, errTailChanged
	}
	out, err := osfile.OpenNoFollow(copyPath, os.O_RDWR, 0)
	if err != nil {
		return s, err
	}
	defer out.Close()
	// The copy is checked as the file is: a fresh copy cut short by a kill
	// (tail.json still describes the tail before it) or an edited one is
	// never extended.
	if copied, err := hashRange(out, 0, s.Size-s.Start); err != nil || copied != s.TailHash {
		return s, errTailChanged
	}
	// A crash between an append and tail.json leaves more than Size−Start
	// bytes: they are written again.
	if err := out.Truncate(s.Size - s.Start); err != nil {
		return s, err
	}
	if size > s.Size {
		if _, err := out.Seek(s.Size-s.Start, io.SeekStart); err != nil {
			return s, err
		}
		if _, err := copyBuf(out, io.NewSectionReader(in, s.Size, size-s.Size), -1, make([]byte, 1<<20)); err != nil {
			return s, err
		}
		if s.TailHash, err = hashRange(in, s.Start, size); err != nil {
			return s, err
		}
		s.Size = size
	}
	return s, nil
}

// freshTail copies the file's last minBytes or more, from a line start.
func freshTail(in *os.File, copyPath, abs string, size, minBytes int64) (tailState, error) {
	start, err := lineStartBefore(in, max(0, size-minBytes))
	if err != nil {
		return tailState{}, err
	}
	s := tailState{Version: tailStateVersion, File: abs, Start: start, Size: size, Copied: size - start}
	if s.PrefixCompactions, err = countIn(in, 0, start, compactBoundary); err != nil {
		return s, err
	}
	if s.SeamHash, err = hashRange(in, max(0, start-tailSeam), start); err != nil {
		return s, err
	}
	s.PrefixCheck = prefixCheck(s)
	if s.TailHash, err = hashRange(in, start, size); err != nil {
		return s, err
	}
	// tail.json goes first: until the new one is written, no state
	// describes a copy being replaced.
	if err := os.Remove(filepath.Join(filepath.Dir(copyPath), tailStateFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return s, err
	}
	// Not what ctxfold wrote (a directory where the copy goes) goes too.
	if err := os.RemoveAll(copyPath); err != nil {
		return s, err
	}
	out, err := osfile.OpenNoFollow(copyPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return s, err
	}
	defer out.Close()
	_, err = copyBuf(out, io.NewSectionReader(in, start, size-start), -1, make([]byte, 1<<20))
	return s, err
}

// lineStartBefore is the start of the line holding offset at (0 for the
// first line).
func lineStartBefore(in *os.File, at int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for end := at; end > 0; {
		from := max(0, end-int64(len(buf)))
		n, err := in.ReadAt(buf[:end-from], from)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return from + int64(i) + 1, nil
		}
		end = from
	}
	return 0, nil
}

// hashRange is the hex XXH64 of the file's bytes [from, to).
func hashRange(in *os.File, from, to int64) (string, error) {
	h := newPrefixHash()
	n, err := copyBuf(h, io.NewSectionReader(in, from, to-from), -1, make([]byte, min(1<<20, max(to-from, 1))))
	if err != nil {
		return "", err
	}
	if n != to-from {
		return "", errTailChanged
	}
	return sumHex(h), nil
}

// countIn counts pat in the file's bytes [from, to): the two halves at
// once (a status line's second core is usually idle), a match that
// straddles the middle counted in the first.
func countIn(in *os.File, from, to int64, pat []byte) (int, error) {
	mid := from + (to-from)/2
	if to-from < 8<<20 {
		return countRange(in, from, to, pat)
	}
	var second int
	var err2 error
	done := make(chan struct{})
	go func() {
		defer close(done)
		second, err2 = countRange(in, mid, to, pat)
	}()
	first, err := countRange(in, from, min(to, mid+int64(len(pat))-1), pat)
	<-done
	if err == nil {
		err = err2
	}
	return first + second, err
}

// countRange counts the matches of pat that lie in [from, to), across
// read buffers.
func countRange(in *os.File, from, to int64, pat []byte) (int, error) {
	buf := make([]byte, min(4<<20, max(to-from, 0)+int64(len(pat))))
	keep := len(pat) - 1
	count, carry := 0, 0
	for off := from; off < to; {
		n, err := in.ReadAt(buf[carry:min(int64(len(buf)), int64(carry)+to-off)], off)
		if n == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return 0, err
		}
		off += int64(n)
		b := buf[:carry+n]
		count += bytes.Count(b, pat)
		// The last len(pat)−1 bytes may start a match the next read ends;
		// they cannot hold a whole one, so none is counted twice.
		carry = min(keep, len(b))
		copy(buf, b[len(b)-carry:])
	}
	return count, nil
}

func readTailState(dir string) (tailState, bool) {
	// Opened as every cache file is (docs/LIVE.md, "Hostile files"): a
	// FIFO or a link to a device costs one open.
	b, err := store.ReadCacheFile(filepath.Join(dir, tailStateFile), maxStateBytes)
	if err != nil {
		return tailState{}, false
	}
	var s tailState
	if json.Unmarshal(b, &s) != nil || s.Version != tailStateVersion || s.Start < 0 || s.Size < s.Start {
		return tailState{}, false
	}
	// The count as the rest of the entry is validated: within what the
	// prefix can hold, and the one counted in these bytes.
	if s.PrefixCompactions < 0 || int64(s.PrefixCompactions) > s.Start/int64(len(compactBoundary)) || s.PrefixCheck != prefixCheck(s) {
		return tailState{}, false
	}
	st, err := os.Lstat(filepath.Join(dir, tailCopyFile))
	if err != nil || !st.Mode().IsRegular() || st.Size() < s.Size-s.Start {
		return tailState{}, false
	}
	return s, true
}

// prefixCheck is the hex XXH64 of the prefix's count, the offset it ends
// at, the seam's hash and the file: tail.json's count is taken only when
// it is the one freshTail wrote for these bytes.
func prefixCheck(s tailState) string {
	h := newPrefixHash()
	fmt.Fprintf(h, "%d\x00%d\x00%s\x00%s", s.PrefixCompactions, s.Start, s.SeamHash, s.File)
	return sumHex(h)
}

func writeTailState(dir string, s tailState) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return writeAtomic(dir, tailStateFile, b, false)
}
