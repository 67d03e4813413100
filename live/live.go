// Package live keeps a cache session for a transcript file a client is
// still writing (a Claude Code session .jsonl, a Codex rollout): the
// read-only commands and the status line run on it instead of asking the
// user to import first. The cache entry is keyed by the file's absolute
// path; its state records how many bytes of the file were consumed and a
// SHA-256 of that prefix. A Claude Code file that only grew is refreshed
// from its saved resume point, parsing only the bytes after it
// (resume.go); any other file that only grew is re-imported with import
// --append (the importer's grown-log completion, docs/FORMAT.md §1,
// "Re-importing a grown log"); a file whose consumed bytes changed or that
// got shorter is imported afresh. The prefix is checked by its hash, never
// trusted by size or mtime (docs/LIVE.md).
package live

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/osfile"
	"github.com/ctxfold/ctxfold/store"
)

// How an Open brought the cache session up to date.
const (
	// Unchanged: the file is exactly what was consumed; nothing was read
	// but the prefix to check its hash.
	Unchanged = "unchanged"
	// Appended: the file grew and its consumed prefix is intact; the
	// session was extended from the resume point (a Claude Code file) or
	// with import --append.
	Appended = "appended"
	// Fresh: no cache yet, or the file was rewritten or truncated; the
	// session was imported anew.
	Fresh = "fresh"
)

// StateVersion is the version of state.json's layout, raised too when an
// importer's output changes, so a cache session an older build imported is
// imported anew (docs/LIVE.md says what each raise was for).
const StateVersion = 9

// Options say where the cache lives and how to import.
type Options struct {
	// CacheDir is the root of ctxfold's cache (DefaultCacheDir when "").
	CacheDir string
	// From is the import format (importer.Auto when "").
	From  string
	Store store.WriteOptions
	Input input.Options
	// LockTimeout bounds the wait for another process refreshing the same
	// entry (10 s when 0).
	LockTimeout time.Duration
	// MaxBytes caps the cache: once its entries hold more, the least
	// recently used are evicted (evict.go). 0 is DefaultMaxBytes; a
	// negative cap evicts nothing.
	MaxBytes int64
	// ResumeGC, when set, is called around a refresh from a resume point
	// and returns what undoes it: the command line holds the collector
	// back there (cmd's resumeGC), since such a refresh allocates the
	// saved planner state — tens of MB for a large session — and keeps
	// almost none of it.
	ResumeGC func() (restore func())
	// Prepare, when set, is started on a goroutine of its own with the
	// cache session's directory during a refresh of an existing one, once
	// the file is hashed: the caller loads meanwhile what it needs after
	// the refresh (the estimate's rank table, estimate.Warm) on the core
	// the hash leaves idle. Open does not wait for it.
	Prepare func(session string)
	// Archive makes the cache an archive (docs/ARCHIVE.md): nothing it
	// held is dropped. A cache session a fresh import replaces is moved
	// to the entry's versions/ directory instead of deleted, and no
	// eviction may ever remove an entry of it.
	Archive bool
}

// Entry is one file's cache session after Open.
type Entry struct {
	// File is the transcript file's absolute path.
	File string `json:"file"`
	// Session is the cache session directory.
	Session string `json:"session"`
	Format  string `json:"format"`
	// Consumed is how many bytes of File the session holds; PrefixHash
	// is the hash of exactly those bytes.
	Consumed   int64  `json:"consumed_bytes"`
	PrefixHash string `json:"prefix_xxh64"`
	// Update is Unchanged, Appended or Fresh; Reason says why a fresh
	// import replaced an existing cache session.
	Update string `json:"update"`
	Reason string `json:"reason,omitempty"`
	// NewNodes is how many nodes this Open wrote.
	NewNodes int `json:"new_nodes"`
	// ParsedBytes is how many bytes of File this Open parsed: the bytes
	// after the resume point for an incremental refresh (resume.go), the
	// whole file otherwise, 0 when unchanged.
	ParsedBytes int64 `json:"parsed_bytes"`

	// release ends the shared hold of the entry (Close).
	release func()
	// ahead is resume.bin as a refresh from a resume point wrote it while
	// its import finished (resume.go's stateWrite).
	ahead *stateWrite
}

// state is what the entry directory's state.json keeps between runs.
type state struct {
	Version    int    `json:"schema_version"`
	File       string `json:"file"`
	Format     string `json:"format"`
	Consumed   int64  `json:"consumed_bytes"`
	PrefixHash string `json:"prefix_xxh64"`
	Dev        uint64 `json:"dev,omitempty"`
	Inode      uint64 `json:"inode,omitempty"`
	// Resume is where the next refresh of a Claude Code file can resume
	// (nil: it parses the whole file); Sidecars the sub-agent files that
	// may lie beside it, as they were.
	Resume   *resumeState `json:"resume,omitempty"`
	Sidecars []sidecar    `json:"sidecars,omitempty"`
	// Configs are the client configuration files the import read (config.go).
	Configs []sidecar `json:"configs,omitempty"`
	// SessionSHA256 is the hash of the cache session's session.json as
	// this refresh left it: the next use checks the session against it
	// (store.CheckCache) and re-imports one that does not check out.
	SessionSHA256 string `json:"session_sha256"`
}

// DefaultCacheDir is $XDG_CACHE_HOME/ctxfold, else ~/.cache/ctxfold.
func DefaultCacheDir() (string, error) { return CacheDirFrom(os.Getenv) }

// CacheDirFrom is DefaultCacheDir with the environment read through getenv.
func CacheDirFrom(getenv func(string) string) (string, error) {
	if d := getenv("XDG_CACHE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "ctxfold"), nil
	}
	if home := getenv("HOME"); home != "" && filepath.IsAbs(home) {
		return filepath.Join(home, ".cache", "ctxfold"), nil
	}
	return "", errors.New("no cache directory: set XDG_CACHE_HOME or HOME")
}

// EntryDir is where the cache entry of the file at abs lives.
func EntryDir(cacheDir, abs string) string {
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(cacheDir, "live", hex.EncodeToString(sum[:10]))
}

// IsTranscriptFile reports whether arg names a regular file (a transcript
// to import), as opposed to a session directory.
func IsTranscriptFile(arg string) bool {
	st, err := os.Stat(arg)
	return err == nil && st.Mode().IsRegular()
}

// Open brings the cache session of file up to date and returns it.
func Open(ctx context.Context, file string, opts Options) (*Entry, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", file)
	}
	if opts.CacheDir == "" {
		if opts.CacheDir, err = DefaultCacheDir(); err != nil {
			return nil, err
		}
	}
	// The cache is the one writer of its sessions (store.CacheSessionError).
	opts.Store.CacheWriter = true
	if opts.Archive {
		opts.MaxBytes = -1 // an archive is never evicted (evict.go)
	}
	db := isDatabase(abs)
	switch {
	case !db:
		// A transcript file is one session, whatever picked it.
		opts.Input.SessionID = ""
	case opts.Input.SessionID == "":
		// A store of several sessions reads as the one the client used
		// last (docs/LIVE.md, "Databases").
		opts.Input.Latest = true
	}
	dir := EntryDir(opts.CacheDir, entryKey(abs, opts.Input.SessionID))
	mu := entryMutex(dir)
	mu.Lock()
	defer mu.Unlock()
	if e := heldEntry(dir); e != nil {
		return e, nil
	}
	f, err := lockLiveEntry(ctx, dir, opts.LockTimeout)
	if err != nil {
		return nil, err
	}
	touch(dir)
	e, err := refresh(ctx, abs, dir, st, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := shareEntry(ctx, dir, f, e, opts.LockTimeout); err != nil {
		return nil, err
	}
	afterRefresh(opts.CacheDir, dir, e.Update, opts.MaxBytes)
	return e, nil
}

// Close lets the entry be refreshed again: until every Entry of it this
// process holds is closed, other processes' refreshes wait and this
// process's Opens of it return the same commit (entrylock.go). The
// process's exit closes it too.
func (e *Entry) Close() {
	if e != nil && e.release != nil {
		e.release()
	}
}

// refresh brings the cache session in dir up to the file at abs (st its
// stat), under the entry's exclusive lock.
func refresh(ctx context.Context, abs, dir string, st os.FileInfo, opts Options) (*Entry, error) {
	e := &Entry{File: abs, Session: filepath.Join(dir, "session")}
	watch := &configWatch{}
	opts.Input.Env.Seen = watch.seen
	// No resume.bin write a refresh started outlives it, whichever way it
	// ends: the entry's lock is released after, and a later refresh's
	// write must not be replaced by this one's.
	defer func() { _ = e.ahead.wait() }()
	old, haveOld := readState(dir)
	if haveOld && (old.File != abs || !isDir(e.Session)) {
		haveOld = false
	}
	if haveOld && opts.From != "" && opts.From != importer.Auto && old.Format != opts.From {
		// --from names another format than the cache session was read as.
		haveOld = false
		e.Reason = fmt.Sprintf("read as %s before, now with --from %s: re-imported", old.Format, opts.From)
	}
	if haveOld {
		// The cache is ctxfold's own copy: anything in it that does not
		// check out is re-imported, never trusted or failed on forever.
		if why := store.CheckCache(e.Session, old.SessionSHA256); why != "" {
			haveOld = false
			e.Reason = "the cache session does not check out (" + why + "): re-imported"
		}
	}
	prepare := func() {}
	if haveOld && opts.Prepare != nil {
		var once sync.Once
		prepare = func() { once.Do(func() { go opts.Prepare(e.Session) }) }
	}
	db := isDatabase(abs)
	cars, err := carsOf(abs, db, old, haveOld)
	if err != nil {
		return nil, err
	}
	var rep *importer.Report
	var res *input.Resume
	var point *resumeState
	done := false
	// The overlapped refresh rewinds before it knows the prefix held: an
	// archive must first know, to keep a rewritten file's session whole.
	if haveOld && !opts.Archive && overlappable(old, cars, st.Size(), opts.From) {
		if rep, res, point, done, err = refreshOverlapped(ctx, e, dir, old, st.Size(), prepare, opts); err != nil {
			return nil, err
		}
		if !done {
			// The work was discarded: what follows sees no cache.
			haveOld = false
		}
	}
	if !done {
		if rep, res, err = refreshSerial(ctx, e, dir, old, haveOld, cars, db, prepare, opts); err != nil {
			return nil, err
		}
		if e.Update == Unchanged {
			return e, nil
		}
	}
	e.Format, e.NewNodes = rep.Format, rep.Sessions[0].Nodes
	if cars, err = withAttached(cars, rep.Sessions[0].AttachedFiles); err != nil {
		return nil, err
	}
	ns := state{Version: StateVersion, File: abs, Format: rep.Format, Consumed: e.Consumed, PrefixHash: e.PrefixHash, Sidecars: cars, Configs: configsOf(watch.paths)}
	if id, ok := osfile.IdentityOf(st); ok {
		ns.Dev, ns.Inode = id.Dev, id.Ino
	}
	ns.Resume = point
	if !done {
		if ns.Resume, err = saveResume(dir, rep, res, e.Consumed, e.ahead); err != nil {
			return nil, err
		}
	}
	if ns.SessionSHA256, err = store.MetaSHA256(e.Session); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	if err := writeState(dir, ns); err != nil {
		return nil, err
	}
	return e, nil
}

// refreshSerial hashes the file, then brings the cache session up to it:
// the path of every refresh that cannot overlap the two (overlap.go).
func refreshSerial(ctx context.Context, e *Entry, dir string, old state, haveOld bool, cars []sidecar, db bool, prepare func(), opts Options) (*importer.Report, *input.Resume, error) {
	// One pass over the file: the hash of the old consumed prefix on the
	// way, the hash of everything at the end.
	prefixSum, fullSum, size, err := hashFile(e.File, old.Consumed, haveOld)
	if err != nil {
		return nil, nil, err
	}
	prepare()
	update, reason := classify(old, haveOld, prefixSum, size)
	if e.Reason != "" && update == Fresh && reason == "" {
		// The overlapped refresh found the change.
		reason = e.Reason
	}
	e.Consumed, e.PrefixHash, e.Format = size, fullSum, old.Format
	if haveOld && update != Fresh {
		switch sidecarChange(old.Sidecars, cars) {
		case Fresh:
			update, reason = Fresh, "a sub-agent file beside the session was rewritten or removed"
		case Appended:
			update = Appended
		}
	}
	if update == Unchanged && configChanged(old.Configs) {
		update, reason = Fresh, "the client's configuration changed"
	}
	if update == Unchanged {
		e.Update = Unchanged
		return nil, nil, nil
	}
	if db && update == Appended {
		// SQLite writes pages in place: a store is never appended to.
		update, reason = Fresh, "the database changed: re-read"
	}
	return importInto(ctx, e, dir, old, update, reason, len(cars) > 0 && !db, opts)
}

// importInto brings the cache session up to the file and sets e's
// Update, Reason and ParsedBytes. A grown Claude Code file with a resume
// point is refreshed from it (resume.go); any other grown file is
// imported with --append, and a fresh import replaces an append that
// could not stay exactly a fresh import's equal.
func importInto(ctx context.Context, e *Entry, dir string, old state, update, reason string, sidecars bool, opts Options) (*importer.Report, *input.Resume, error) {
	from := opts.From
	if from == "" {
		from = importer.Auto
	}
	if update == Appended && old.Format != "" && from == importer.Auto {
		from = old.Format
	}
	format := from
	if format == importer.Auto {
		format, _ = importer.DetectFile(e.File)
	}
	// Claude Code (without sub-agent files) and Codex imports resume.
	resumable := format == importer.ClaudeCode && !sidecars || format == importer.Codex
	e.ParsedBytes = e.Consumed
	if update == Appended && resumable && old.Resume != nil {
		rep, res, err := resumeImport(ctx, e, dir, old, opts)
		if err == nil {
			e.Update, e.ParsedBytes = Appended, res.Parsed
			return rep, res, checkOne(rep, e.File)
		}
		if !cannotResume(err) {
			return nil, nil, err
		}
		update, reason = Fresh, "the saved resume point no longer applies ("+err.Error()+"): re-imported"
	} else if update == Appended && resumable {
		// No resume point to go on: a fresh import parses as much as an
		// append would and leaves one for the next refresh.
		update, reason = Fresh, "no resume point was saved: re-imported"
	}
	var res *input.Resume
	if resumable {
		res = &input.Resume{Limit: e.Consumed}
	}
	rep, update, reason, err := importWhole(ctx, e, dir, from, update, reason, res, opts)
	e.Update, e.Reason = update, reason
	if err != nil {
		return nil, nil, err
	}
	if update == Fresh {
		if err := store.MarkCache(e.Session, opts.Store); err != nil {
			return nil, nil, fmt.Errorf("cache: %w", err)
		}
	}
	return rep, res, checkOne(rep, e.File)
}

func checkOne(rep *importer.Report, file string) error {
	if len(rep.Sessions) != 1 {
		return fmt.Errorf("%s holds %d conversations; give a session directory imported with ctxfold import instead", file, len(rep.Sessions))
	}
	return nil
}

// importWhole imports the whole file: an append of what grew, or a fresh
// import, which also replaces an append that could not stay exactly a
// fresh import's equal.
func importWhole(ctx context.Context, e *Entry, dir, from, update, reason string, res *input.Resume, opts Options) (*importer.Report, string, string, error) {
	if update == Fresh {
		if err := dropSession(e, dir, opts.Archive); err != nil {
			return nil, update, reason, err
		}
	}
	rep, err := importer.Import(ctx, importer.Options{
		From: from, Files: []string{e.File}, Out: e.Session, Append: update == Appended,
		Store: opts.Store, Input: opts.Input, Resume: res,
	})
	if err == nil && update == Appended && len(rep.Sessions) == 1 && rep.Sessions[0].Continued+rep.Sessions[0].Differing > 0 {
		// The earlier import ended inside a streamed request (or a stored
		// node gained fields since): --append keeps the stored part and
		// adds a copy, as it must in a user's session. The cache is ours,
		// so it is rebuilt to be exactly a fresh import of the file.
		update = Fresh
		reason = "the earlier import ended inside a streamed request (or a stored node changed since): re-imported"
		if err := dropSession(e, dir, opts.Archive); err != nil {
			return nil, update, reason, err
		}
		rep, err = importer.Import(ctx, importer.Options{From: from, Files: []string{e.File}, Out: e.Session,
			Store: opts.Store, Input: opts.Input, Resume: res})
	}
	return rep, update, reason, err
}

// hashFile hashes the file at path: the hex SHA-256 of its first cut bytes
// (when wantPrefix and the file is that long), of all of it, and its size
// as read.
func hashFile(path string, cut int64, wantPrefix bool) (prefix, full string, size int64, err error) {
	return hashUpTo(path, cut, wantPrefix, -1)
}

// hashUpTo is hashFile reading at most limit bytes (all when limit < 0).
func hashUpTo(path string, cut int64, wantPrefix bool, limit int64) (prefix, full string, size int64, err error) {
	f, err := openInput(path)
	if err != nil {
		return "", "", 0, err
	}
	defer f.Close()
	if prefix, full, size, ok := hashMapped(f, cut, wantPrefix, limit); ok {
		return prefix, full, size, nil
	}
	h := newPrefixHash()
	// io.Copy's 32 KiB buffer costs a read call per 32 KiB of a file of
	// hundreds of MB.
	buf := make([]byte, hashBuf)
	if wantPrefix {
		n, err := copyBuf(h, f, cut, buf)
		size = n
		if err != nil {
			return "", "", 0, err
		}
		if n == cut {
			prefix = sumHex(h)
		}
	}
	rest := int64(-1)
	if limit >= 0 {
		rest = max(limit-size, 0)
	}
	n, err := copyBuf(h, f, rest, buf)
	if err != nil {
		return "", "", 0, err
	}
	return prefix, sumHex(h), size + n, nil
}

// maxStateBytes bounds state.json (it lists the sub-agent files; a few KB).
const maxStateBytes = 16 << 20

// openInput opens a transcript or sub-agent file for reading: it never
// blocks on a FIFO and refuses anything but a regular file (a device such
// as /dev/zero would read forever), as every input is checked.
func openInput(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%s: not a regular file", path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// hashBuf is the read size of hashFile.
const hashBuf = 2 << 20

// copyBuf writes the next n bytes of r into w (all up to EOF when n < 0)
// through buf, and says how many it copied; EOF before n is no error.
func copyBuf(w io.Writer, r io.Reader, n int64, buf []byte) (int64, error) {
	var done int64
	for n < 0 || done < n {
		b := buf
		if n >= 0 && n-done < int64(len(b)) {
			b = b[:n-done]
		}
		k, err := r.Read(b)
		if k > 0 {
			_, _ = w.Write(b[:k]) // a hash.Hash never fails a Write
			done += int64(k)
		}
		if errors.Is(err, io.EOF) {
			return done, nil
		}
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// sumHex is h's digest so far (Sum does not reset h).
func sumHex(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

func isDir(p string) bool {
	st, err := os.Lstat(p)
	return err == nil && st.IsDir()
}

func readState(dir string) (state, bool) {
	b, err := store.ReadCacheFile(filepath.Join(dir, "state.json"), maxStateBytes)
	if err != nil {
		return state{}, false
	}
	var s state
	if json.Unmarshal(b, &s) != nil || s.Version != StateVersion || s.Consumed < 0 {
		return state{}, false
	}
	return s, true
}

// writeState replaces state.json atomically.
func writeState(dir string, s state) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(dir, "state.json", append(b, '\n'), true)
}

// writeAtomic replaces dir/name with b: write, sync (unless !sync),
// rename.
func writeAtomic(dir, name string, b []byte, sync bool) error {
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("cache: %w", err)
	}
	if err := syncIf(tmp, sync); err != nil {
		tmp.Close()
		return fmt.Errorf("cache: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	target := filepath.Join(dir, name)
	if st, err := os.Lstat(target); err == nil && !st.Mode().IsRegular() {
		// Not what ctxfold wrote (a directory, a FIFO, a symlink): the
		// cache is ours, so it goes.
		_ = os.RemoveAll(target)
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	return nil
}

func syncIf(f *os.File, sync bool) error {
	if !sync {
		return nil
	}
	return f.Sync()
}
