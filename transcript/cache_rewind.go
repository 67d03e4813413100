// Cache sessions: the sessions ctxfold keeps for a transcript file
// (transcript/live) and the one write that may shrink one, RewindCache
// (docs/FORMAT.md §1, "Cache sessions"). A user's session is never
// rewound: its files are append-only.

package transcript

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
	opts.CacheWriter = true // a cache-only operation: it refuses any other session
	_, err := update(ctx, dir, opts, nil, func(tx *Tx) error {
		s := tx.s
		metaPath := filepath.Join(dir, MetaFile)
		if !s.Meta.Cache {
			return &ValidationError{Msg: fmt.Sprintf("%s: not a cache session (only ctxfold's own cache sessions can be rewound; a session's nodes are append-only)", dir)}
		}
		if to.NodesBytes == nil || *to.NodesBytes > s.CommittedBytes || to.FormatVersion != s.Meta.FormatVersion {
			return &ValidationError{Msg: fmt.Sprintf("%s: the state to rewind to is not an earlier commit (it records %s committed bytes; the session has %d)", metaPath, bytesOrNone(to.NodesBytes), s.CommittedBytes)}
		}
		cut := *to.NodesBytes
		toChain, ok := metaChain(to, cut)
		if !ok {
			return &ValidationError{Msg: fmt.Sprintf("%s: the state to rewind to carries no hash chain for its %d bytes (read it with ReadMeta after a commit of this ctxfold)", metaPath, cut)}
		}
		ext, err := toChain.extend(s.f, cut, s.CommittedBytes-cut)
		if err != nil {
			return &ParseError{File: s.NodesPath(), Msg: "reading: " + err.Error()}
		}
		if ext.sum() != s.chain.sum() {
			return &ValidationError{Msg: fmt.Sprintf("%s: the state to rewind to is not an earlier commit of this session (its nodes_sha256 does not lead to the current one)", metaPath)}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		return tx.rewind(to, cut)
	})
	return err
}

// rewind commits to, then cuts nodes.jsonl to cut and re-stamps the
// fingerprint.
func (tx *Tx) rewind(to Meta, cut int64) error {
	path := tx.s.NodesPath()
	m := to
	m.Cache = true
	// to's fingerprint is of the file before the cut; the one after it is
	// recorded once the cut is made. Until then a reader re-hashes.
	m.NodesStat = nil
	if err := writeMeta(tx.dir, m); err != nil {
		return err
	}
	if !snapshotCovers(tx.dir, cut) {
		dropSnapshot(tx.dir)
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
		if err := writeMeta(tx.dir, m); err != nil {
			return err
		}
	}
	tx.rewound = true
	// The transaction's snapshot is of the longer file: re-read it.
	return tx.reload()
}

func bytesOrNone(n *int64) string {
	if n == nil {
		return "no"
	}
	return fmt.Sprint(*n)
}
