package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ctxfold/ctxfold/transcript"
)

// WriteOptions tune a write.
type WriteOptions struct {
	LockTimeout  time.Duration
	MaxLineBytes int
	// Command names the writer in the lock file (for "locked by" errors).
	Command string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// CacheWriter says the writer is the live cache (live), the
	// one writer of a cache session (MarkCache). Every other write to a
	// cache session is refused with a *CacheSessionError: the session is
	// rebuilt from its transcript file at the next refresh, so a summary
	// or a moved HEAD written there would be lost or, worse, answer for
	// the file until then (docs/LIVE.md).
	CacheWriter bool
}

func (o WriteOptions) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// Init creates a session directory (or an empty existing one).
func Init(dir string, model string, opts WriteOptions) (*Meta, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, &transcript.ParseError{File: dir, Msg: err.Error()}
	}
	if _, err := os.Stat(filepath.Join(dir, MetaFile)); err == nil {
		return nil, &ValidationError{Msg: fmt.Sprintf("%s: already a session", dir)}
	}
	// Lines already in a nodes.jsonl would sit after committed length 0 and
	// be moved to lost+found/ by the first write: refuse instead.
	if st, err := os.Stat(filepath.Join(dir, NodesFile)); err == nil && st.Size() > 0 {
		return nil, &ValidationError{Msg: fmt.Sprintf("%s: holds a non-empty %s but no %s; not initializing over it (use 'ctxfold import')", dir, NodesFile, MetaFile)}
	}
	for _, name := range []string{NodesFile, EventsFile} {
		f, err := openForWrite(filepath.Join(dir, name), os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, fileErr(filepath.Join(dir, name), err)
		}
		f.Close()
	}
	zero := int64(0)
	m := Meta{FormatVersion: InitFormatVersion, Model: model, CreatedAt: opts.now().UTC().Format(time.RFC3339), NodesBytes: &zero}
	m.setChain(newChain())
	if st, err := os.Lstat(filepath.Join(dir, NodesFile)); err == nil {
		if fp, ok := statOf(st); ok {
			m.NodesStat = &fp
		}
	}
	if err := writeMeta(dir, m); err != nil {
		return nil, err
	}
	return &m, nil
}

// Tx is a locked write transaction on one session: its snapshot is fresh
// (read under the lock) and every write through it is committed before it
// returns. Tx is the only place HEAD changes (docs/FORMAT.md §1).
type Tx struct {
	// ctx is Update's context: a write checks it right before its commit
	// point, so an interrupted command writes nothing.
	ctx  context.Context
	dir  string
	opts WriteOptions
	s    *Session
	// Warnings collects what recovery did (moved an interrupted write aside).
	Warnings []Warning
	// checked: the snapshot passed checkIntegrity.
	checked bool
	// chainChanged: the committed bytes no longer matched nodes_sha256
	// when the transaction began (loadChain).
	chainChanged bool
	// rewound: the transaction cut a cache session back (RewindCache), so
	// a snapshot written at its end covers exactly the cut
	// (snapshotRewindDelta).
	rewound bool
	// covered is the coverage of the last summary this transaction
	// committed, checked whole: a later span that extends it is walked
	// back only to its last node (walkCoverage), so an import that
	// compacts K times walks each covered node once, not K times.
	covered coverMemo
}

// coverMemo is a checked summary's span and predecessor.
type coverMemo struct {
	span transcript.CoverSpan
	pred string
}

// interrupted checks the context every 4096 nodes of a batch: validating
// and encoding a large one takes seconds, and Ctrl-C must stop it well
// before cmd's grace period ends (nothing is written yet).
func (tx *Tx) interrupted(i int) error {
	if i%4096 != 0 || tx.ctx == nil {
		return nil
	}
	return tx.ctx.Err()
}

// Update runs fn under the session's exclusive lock. The session fn sees
// is read after the lock is taken. A write that is refused leaves every
// file byte-identical: an interrupted earlier write is moved to
// lost+found/ only by the first write that commits nodes (recoverTail),
// and a broken graph refuses Append before anything is written.
func Update(ctx context.Context, dir string, opts WriteOptions, fn func(tx *Tx) error) ([]Warning, error) {
	return update(ctx, dir, opts, nil, fn)
}

// update is Update with a step run under the lock before the session is
// read (repair's fix of a file shorter than its recorded length, which
// no snapshot can be read from).
func update(ctx context.Context, dir string, opts WriteOptions, beforeOpen func() ([]Warning, error), fn func(tx *Tx) error) ([]Warning, error) {
	// Refuse a non-session, and session files that are symlinks or not
	// regular files, before creating a lock file in it.
	if err := refuseCache(dir, opts); err != nil {
		return nil, err
	}
	if err := checkWritable(dir); err != nil {
		return nil, err
	}
	lock, err := acquireLock(ctx, dir, opts.LockTimeout, opts.Command, opts.now)
	if err != nil {
		return nil, err
	}
	defer lock.release()
	// A writer killed inside writeFileAtomic leaves its temp file; under
	// the lock no other writer is using one, so any left is garbage.
	stale, _ := filepath.Glob(filepath.Join(dir, "."+MetaFile+".tmp-*"))
	lfStale, _ := filepath.Glob(filepath.Join(dir, LostFound, ".*.tmp-*"))
	stale = append(stale, lfStale...)
	snapStale, _ := filepath.Glob(filepath.Join(dir, filepath.Dir(SnapshotFile), "."+filepath.Base(SnapshotFile)+".tmp-*"))
	for _, p := range append(stale, snapStale...) {
		_ = os.Remove(p)
	}
	tx := &Tx{ctx: ctx, dir: dir, opts: opts}
	if beforeOpen != nil {
		w, err := beforeOpen()
		tx.Warnings = append(tx.Warnings, w...)
		if err != nil {
			return tx.Warnings, err
		}
	}
	if err := tx.reload(); err != nil {
		return tx.Warnings, err
	}
	defer func() { tx.s.Close() }()
	err = fn(tx)
	if err == nil {
		tx.maybeSnapshot()
		if tx.chainChanged || (tx.s != nil && tx.s.Meta.NodesSHA256 != "") {
			// A chain found broken (warned at the start) restarts from the
			// file as it is even when this write appended nothing; a stat
			// that no longer matches (a touch, repair's truncation of a
			// tail) is recorded again, so opens need not re-hash.
			tx.stampChain()
		}
	}
	return tx.Warnings, err
}

// refuseCache reads dir's session.json and refuses a cache session unless
// the writer is the live cache itself (WriteOptions.CacheWriter). It runs
// before the lock is taken, so a refused write creates no file.
func refuseCache(dir string, opts WriteOptions) error {
	m, err := readMeta(dir)
	if err != nil {
		return err
	}
	if m.Cache && !opts.CacheWriter {
		return &CacheSessionError{Dir: dir, Command: opts.Command}
	}
	return nil
}

func (tx *Tx) reload() error {
	if tx.s != nil {
		tx.s.Close()
	}
	s, err := Open(tx.dir, OpenOptions{MaxLineBytes: tx.opts.MaxLineBytes, Context: tx.ctx, transient: true})
	if err != nil {
		return err
	}
	tx.s = s
	return tx.loadChain()
}

// loadChain gives the writer the digest state of the committed bytes, to
// extend at its commit: session.json's when the file is as the last
// commit left it, else the file's own, with a warning when its committed
// bytes no longer match the recorded digest (docs/FORMAT.md §1).
func (tx *Tx) loadChain() error {
	s := tx.s
	if s.chain != nil {
		return nil
	}
	if s.f == nil {
		s.chain = newChain()
		return nil
	}
	st, err := s.f.Stat()
	if err != nil {
		return fileErr(s.NodesPath(), err)
	}
	c, _, changed, err := committedChain(s.Meta, s.f, st, s.CommittedBytes)
	if err != nil {
		return err
	}
	if changed {
		tx.Warnings = append(tx.Warnings, Warning{File: s.NodesPath(), Msg: changedMsg(s.CommittedBytes)})
		tx.chainChanged = true
	}
	s.chain = c
	return nil
}

// Session is the transaction's current snapshot (it reflects the
// transaction's own writes).
func (tx *Tx) Session() *Session { return tx.s }

// recoverTail moves bytes after the committed length (an interrupted write
// or a torn line) to lost+found/ and truncates nodes.jsonl back to its
// committed length, so nothing is lost and appends stay line-aligned. It
// runs only when a write is about to commit nodes (or under repair), and
// never when session.json disagrees with the committed nodes: a HEAD or
// active summary that is not among them means the recorded length, not
// the tail, is wrong, and moving the tail aside would empty the session.
func (tx *Tx) recoverTail() error {
	s := tx.s
	if s.TailBytes == 0 {
		return nil
	}
	path := s.NodesPath()
	metaPath := filepath.Join(tx.dir, MetaFile)
	for _, k := range []struct{ key, id string }{{"head", s.Meta.Head}, {"active_summary_id", s.Meta.ActiveSummaryID}} {
		if _, ok := s.Lookup(k.id); k.id != "" && !ok {
			return &transcript.ParseError{File: metaPath, Line: s.MetaKeyLine(k.key), NodeID: k.id,
				Msg: fmt.Sprintf("%s is not among the %d committed bytes of %s, which is followed by %d more: session.json is inconsistent with %s, so its tail is not moved aside; fix nodes_bytes by hand", k.key, s.CommittedBytes, NodesFile, s.TailBytes, NodesFile)}
		}
	}
	f, err := openForWrite(path, os.O_RDWR, 0)
	if err != nil {
		return fileErr(path, err)
	}
	defer f.Close()
	tail := make([]byte, s.TailBytes)
	if _, err := f.ReadAt(tail, s.CommittedBytes); err != nil && !errors.Is(err, io.EOF) {
		return &transcript.ParseError{File: path, Msg: "reading the interrupted write: " + err.Error()}
	}
	name, err := tx.keepLost("nodes", tail)
	if err != nil {
		return err
	}
	if err := f.Truncate(s.CommittedBytes); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	line := s.Len() + len(s.Duplicates) + 1
	tx.Warnings = append(tx.Warnings, Warning{File: path, Line: line,
		Msg: fmt.Sprintf("moved %d bytes of an interrupted write to %s", len(tail), name)})
	if s.Meta.NodesBytes == nil || *s.Meta.NodesBytes != s.CommittedBytes {
		m := s.Meta
		n := s.CommittedBytes
		m.NodesBytes = &n
		if err := writeMeta(tx.dir, m); err != nil {
			return err
		}
		s.Meta = m
	}
	// The committed part, and so the index, is unchanged: no re-read.
	s.TailBytes = 0
	return nil
}

// keepLost writes data to a new file lost+found/PREFIX-TIME.jsonl and
// returns its path.
func (tx *Tx) keepLost(prefix string, data []byte) (string, error) {
	return keepLost(tx.dir, prefix, data, tx.opts.now())
}

func keepLost(dir, prefix string, data []byte, now time.Time) (string, error) {
	lf := filepath.Join(dir, LostFound)
	if err := os.MkdirAll(lf, 0o755); err != nil {
		return "", err
	}
	if st, err := os.Lstat(lf); err != nil || !st.IsDir() {
		return "", &transcript.ParseError{File: lf, Msg: "is not a directory; ctxfold keeps recovered bytes there"}
	}
	name := fmt.Sprintf("%s-%s.jsonl", prefix, now.UTC().Format("20060102T150405.000000000Z"))
	if err := writeFileAtomic(lf, name, data); err != nil {
		return "", err
	}
	return filepath.Join(lf, name), nil
}

// NewID returns a fresh random node id ("n" + 16 hex digits; summaries get
// the "summary_" prefix).
func NewID(n *transcript.Node) string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	if n != nil && n.IsSummary() {
		return transcript.SummaryIDPrefix + hex.EncodeToString(b[:])
	}
	return "n" + hex.EncodeToString(b[:])
}

func sameInt(a, b *int64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func quoteOrNull(s string) string {
	if s == "" {
		return "null"
	}
	return fmt.Sprintf("%q", s)
}

func quoteList(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = fmt.Sprintf("%q", id)
	}
	return strings.Join(q, ", ")
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
