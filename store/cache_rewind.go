// Cache sessions: the sessions ctxfold keeps for a transcript file
// (live) and the one write that may shrink one, RewindCache
// (docs/FORMAT.md §1, "Cache sessions"). A user's session is never
// rewound: its files are append-only.

package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ctxfold/ctxfold/transcript"
)

// MarkCache marks dir (a session directory ctxfold created) as a cache
// session; only those can be rewound. Marking one twice is a no-op.
func MarkCache(dir string, opts WriteOptions) error {
	opts.CacheWriter = true
	_, err := update(context.Background(), dir, opts, nil, func(tx *Tx) error {
		if tx.s.Meta.Cache {
			return nil
		}
		m := tx.s.Meta
		m.Cache = true
		if err := writeMeta(tx.dir, m); err != nil {
			return err
		}
		tx.s.Meta = m
		return nil
	})
	return err
}

// RewindCache cuts a cache session back to an earlier commit: nodes.jsonl
// to to.NodesBytes and session.json to to (as ReadMeta read it right
// after that commit), under the lock. session.json is written first, then
// the file truncated: a crash in between leaves bytes after the committed
// length, which readers ignore and the next write moves to lost+found/.
// It refuses a session not marked with MarkCache, and a to that is not an
// earlier commit of this session: its digest state, extended by the bytes
// between, must give the session's current nodes_sha256 (so the check
// reads only those bytes). The index snapshot survives when it covers a
// prefix of the cut. events.jsonl is left as it is.
func RewindCache(ctx context.Context, dir string, to Meta, opts WriteOptions) error {
	_, err := UpdateFrom(ctx, dir, to, opts, nil)
	var re *RewindError
	if errors.As(err, &re) {
		return re.Err
	}
	return err
}

// RewindError is a rewind UpdateFrom refused or could not make; Err is
// what RewindCache returns for it.
type RewindError struct{ Err error }

func (e *RewindError) Error() string { return e.Err.Error() }
func (e *RewindError) Unwrap() error { return e.Err }

// UpdateFrom is RewindCache and then Update's fn in one transaction: one
// lock and one read of the session for both (a live refresh from a resume
// point cuts its cache session back to the resume point's commit and
// appends what follows it; as two transactions, the lock, the read of the
// index and the stamp of the chain were paid twice, docs/BENCHMARKS.md
// "the cold path"). The cut is made under the lock before the session is
// read, so the index is read once, of the cut session. A refused or
// failed rewind is a *RewindError and fn does not run.
func UpdateFrom(ctx context.Context, dir string, to Meta, opts WriteOptions, fn func(tx *Tx) error) ([]Warning, error) {
	opts.CacheWriter = true // a cache-only operation: it refuses any other session
	return update(ctx, dir, opts, func() ([]Warning, error) {
		if err := rewindUnread(ctx, dir, to); err != nil {
			return nil, &RewindError{Err: err}
		}
		return nil, nil
	}, func(tx *Tx) error {
		tx.rewound = true
		tx.covered = coverMemo{} // it may name nodes the cut removed
		if fn == nil {
			return nil
		}
		return fn(tx)
	})
}

// rewindUnread checks, under the lock and from session.json and the bytes
// between the two commits only, that to is an earlier commit of the cache
// session in dir, and cuts the session back to it.
func rewindUnread(ctx context.Context, dir string, to Meta) error {
	metaPath := filepath.Join(dir, MetaFile)
	m, err := readMeta(dir)
	if err != nil {
		return err
	}
	if !m.Cache {
		return &ValidationError{Msg: fmt.Sprintf("%s: not a cache session (only ctxfold's own cache sessions can be rewound; a session's nodes are append-only)", dir)}
	}
	var committed int64
	if m.NodesBytes != nil {
		committed = *m.NodesBytes
	}
	if to.NodesBytes == nil || *to.NodesBytes > committed || to.FormatVersion > m.FormatVersion {
		return &ValidationError{Msg: fmt.Sprintf("%s: the state to rewind to is not an earlier commit (it records %s committed bytes; the session has %d)", metaPath, bytesOrNone(to.NodesBytes), committed)}
	}
	cut := *to.NodesBytes
	toChain, ok := metaChain(to, cut)
	if !ok {
		return &ValidationError{Msg: fmt.Sprintf("%s: the state to rewind to carries no hash chain for its %d bytes (read it with ReadMeta after a commit of this ctxfold)", metaPath, cut)}
	}
	now, ok := metaChain(m, committed)
	if !ok {
		return &ValidationError{Msg: fmt.Sprintf("%s: the session carries no hash chain for its %d committed bytes, so no earlier commit can be checked", metaPath, committed)}
	}
	path := filepath.Join(dir, NodesFile)
	f, err := openRegular(path)
	if err != nil {
		return fileErr(path, err)
	}
	ext, err := toChain.extend(f, cut, committed-cut)
	f.Close()
	if err != nil {
		return &transcript.ParseError{File: path, Msg: "reading: " + err.Error()}
	}
	if ext.sum() != now.sum() {
		return &ValidationError{Msg: fmt.Sprintf("%s: the state to rewind to is not an earlier commit of this session (its nodes_sha256 does not lead to the current one)", metaPath)}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return cutTo(dir, to, cut)
}

// cutTo commits to, then cuts nodes.jsonl to cut and re-stamps the
// fingerprint.
func cutTo(dir string, to Meta, cut int64) error {
	path := filepath.Join(dir, NodesFile)
	m := to
	m.Cache = true
	// to's fingerprint is of the file before the cut; the one after it is
	// recorded once the cut is made. Until then a reader re-hashes.
	m.NodesStat = nil
	if err := writeMeta(dir, m); err != nil {
		return err
	}
	if !snapshotCovers(dir, cut) {
		dropSnapshot(dir)
	}
	f, err := openForWrite(path, os.O_RDWR, 0)
	if err != nil {
		return fileErr(path, err)
	}
	defer f.Close()
	if err := f.Truncate(cut); err != nil {
		return &WriteError{File: path, Op: "truncate", Err: err}
	}
	if err := f.Sync(); err != nil {
		return &WriteError{File: path, Op: "fsync", Err: err}
	}
	st, err := f.Stat()
	if err != nil {
		return fileErr(path, err)
	}
	if fp, ok := statOf(st); ok && fp.Size == cut {
		m.NodesStat = &fp
		if err := writeMeta(dir, m); err != nil {
			return err
		}
	}
	return nil
}

func bytesOrNone(n *int64) string {
	if n == nil {
		return "no"
	}
	return fmt.Sprint(*n)
}

// maxMetaBytes bounds a cache session's session.json read by CheckCache
// (ctxfold writes a few hundred bytes; an active summary's text at most a
// few MB).
const maxMetaBytes = 64 << 20

// CheckCache says why the cache session in dir does not check out, ""
// when it does: its session files must be regular files (no symlink, no
// directory, no FIFO), session.json must be the bytes whose SHA-256 is
// metaSHA256 (what the cache recorded after its last refresh: a hand-
// edited HEAD, model, window or format_version fails here), and the
// committed bytes of nodes.jsonl must be the ones session.json records —
// trusted by the stat fingerprint of the commit, re-hashed when the stat
// differs (one changed byte of the same length changes the ctime). It
// costs a few stats and a read of session.json unless the file was
// touched. live re-imports a session that does not check out.
func CheckCache(dir, metaSHA256 string) string {
	for _, name := range []string{MetaFile, NodesFile, EventsFile, LockFile} {
		st, err := os.Lstat(filepath.Join(dir, name))
		switch {
		case errors.Is(err, os.ErrNotExist) && (name == EventsFile || name == LockFile):
		case err != nil:
			return name + ": " + err.Error()
		case !st.Mode().IsRegular():
			return name + " is not a regular file"
		}
	}
	data, err := ReadCacheFile(filepath.Join(dir, MetaFile), maxMetaBytes)
	if err != nil {
		return MetaFile + ": " + err.Error()
	}
	sum := sha256.Sum256(data)
	if metaSHA256 == "" || hex.EncodeToString(sum[:]) != metaSHA256 {
		return MetaFile + " changed since the last refresh"
	}
	m, err := readMeta(dir)
	if err != nil {
		return err.Error()
	}
	if !m.Cache || m.NodesBytes == nil || m.NodesSHA256 == "" {
		return MetaFile + " is not a cache session's with its hash chain"
	}
	return checkCommitted(dir, m)
}

// checkCommitted: the first nodes_bytes of nodes.jsonl hash to
// nodes_sha256 (re-read only when the file's stat is not the commit's).
func checkCommitted(dir string, m Meta) string {
	f, err := openRegularNoFollow(filepath.Join(dir, NodesFile), true)
	if err != nil {
		return NodesFile + ": " + err.Error()
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return NodesFile + ": " + err.Error()
	}
	if st.Size() < *m.NodesBytes {
		return fmt.Sprintf("%s is shorter than the %d bytes committed", NodesFile, *m.NodesBytes)
	}
	_, _, changed, err := committedChain(m, f, st, *m.NodesBytes)
	switch {
	case err != nil:
		return err.Error()
	case changed:
		return fmt.Sprintf("the %d committed bytes of %s changed since they were written", *m.NodesBytes, NodesFile)
	}
	return ""
}

// MetaSHA256 is the hex SHA-256 of the session.json of the cache session
// in dir, for CheckCache.
func MetaSHA256(dir string) (string, error) {
	data, err := ReadCacheFile(filepath.Join(dir, MetaFile), maxMetaBytes)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}
