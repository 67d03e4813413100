// Repair: the explicit mend of a session left inconsistent by a crash
// (docs/FORMAT.md), kept apart from the ordinary write path so that it
// only ever runs when asked for.

package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/ctxfold/ctxfold/transcript"
)

// RepairOptions tune Repair.
type RepairOptions struct {
	WriteOptions
	// Unlock removes a lock file whose holder is gone.
	Unlock bool
}

// Repair recovers a session after a crash: an interrupted write or a torn
// last line is moved to lost+found/ and nodes.jsonl truncated to its last
// complete, committed line. A nodes.jsonl shorter than session.json's
// committed length (bytes removed outside ctxfold) is truncated to its last
// complete line, the partial line kept in lost+found/, and the committed
// length recomputed; a HEAD that was among the removed bytes moves to the
// last complete node. A malformed line in the middle is not repaired: it
// is reported, and the session is left as it is.
func Repair(ctx context.Context, dir string, opts RepairOptions) ([]Warning, error) {
	if err := refuseCache(dir, opts.WriteOptions); err != nil {
		return nil, err
	}
	if opts.Unlock {
		// The lock is a kernel flock: it dies with its holder, so a "stale"
		// lock is only a stale holder record. Clearing it means taking the
		// lock and releasing it (which empties the record). Removing the
		// file instead would let a writer still waiting on the old inode
		// and a new one on a fresh file both believe they hold the lock.
		lk, err := acquireLock(ctx, dir, 100*time.Millisecond, "repair --unlock", opts.now)
		if err != nil {
			return nil, err
		}
		lk.release()
	}
	truncated := false
	before := func() ([]Warning, error) {
		w, err := repairShortFile(dir, opts.now())
		truncated = len(w) > 0
		return w, err
	}
	return update(ctx, dir, opts.WriteOptions, before, func(tx *Tx) error {
		s := tx.s
		if err := tx.recoverTail(); err != nil {
			return err
		}
		if s.Meta.NodesBytes == nil {
			m := s.Meta
			n := s.CommittedBytes
			m.NodesBytes = &n
			if err := writeMeta(tx.dir, m); err != nil {
				return err
			}
			tx.Warnings = append(tx.Warnings, Warning{File: filepath.Join(dir, MetaFile), Msg: fmt.Sprintf("recorded the committed length (%d bytes)", n)})
			if err := tx.reload(); err != nil {
				return err
			}
		}
		if truncated {
			return tx.reattachMeta()
		}
		return nil
	})
}

// repairShortFile truncates a nodes.jsonl shorter than its recorded
// committed length to its last complete line, keeps the partial line in
// lost+found/ and records the new length. It returns what it did.
func repairShortFile(dir string, now time.Time) ([]Warning, error) {
	meta, err := readMeta(dir)
	if err != nil || meta.NodesBytes == nil {
		return nil, err
	}
	path := filepath.Join(dir, NodesFile)
	f, err := openForWrite(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, &transcript.ParseError{File: path, Msg: fmt.Sprintf("missing, but session.json records %d committed bytes; nothing to truncate", *meta.NodesBytes)}
	}
	if err != nil {
		return nil, fileErr(path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fileErr(path, err)
	}
	if st.Size() >= *meta.NodesBytes {
		return nil, nil
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fileErr(path, err)
	}
	cut := int64(bytes.LastIndexByte(data, '\n') + 1)
	var warnings []Warning
	if tail := data[cut:]; len(tail) > 0 {
		name, err := keepLost(dir, "nodes-truncated", tail, now)
		if err != nil {
			return nil, err
		}
		if err := f.Truncate(cut); err != nil {
			return nil, err
		}
		if err := f.Sync(); err != nil {
			return nil, err
		}
		warnings = append(warnings, Warning{File: path, Line: bytes.Count(data, []byte("\n")) + 1,
			Msg: fmt.Sprintf("moved the %d bytes of a partial last line to %s", len(tail), name)})
	}
	recorded := *meta.NodesBytes
	meta.NodesBytes = &cut
	meta.clearChain()
	if err := writeMeta(dir, meta); err != nil {
		return nil, err
	}
	warnings = append(warnings, Warning{File: filepath.Join(dir, MetaFile),
		Msg: fmt.Sprintf("the file was %d bytes but session.json recorded %d (data removed outside ctxfold); the committed length is now %d", st.Size(), recorded, cut)})
	return warnings, nil
}

// reattachMeta points HEAD and the active summary at nodes that exist
// after repairShortFile removed bytes: a HEAD among them moves to the last
// complete node that may hold HEAD, an active summary among them is
// cleared (the summary before it is a relic; a later compaction writes a
// new one).
func (tx *Tx) reattachMeta() error {
	s := tx.s
	m := s.Meta
	metaPath := filepath.Join(tx.dir, MetaFile)
	if _, ok := s.Lookup(m.Head); m.Head != "" && !ok {
		old := m.Head
		m.Head = ""
		for i := s.Len() - 1; i >= 0; i-- {
			if !s.IsSummary(i) && s.CallerIndex(i) == NoLink {
				m.Head = s.ID(i)
				break
			}
		}
		tx.Warnings = append(tx.Warnings, Warning{File: metaPath, Msg: fmt.Sprintf("HEAD %q was among the removed bytes; HEAD is now %s, the last complete node (move it with 'ctxfold checkout')", old, quoteOrNull(m.Head))})
	}
	if _, ok := s.Lookup(m.ActiveSummaryID); m.ActiveSummaryID != "" && !ok {
		tx.Warnings = append(tx.Warnings, Warning{File: metaPath, Msg: fmt.Sprintf("the active summary %q was among the removed bytes; no summary is active now", m.ActiveSummaryID)})
		m.ActiveSummaryID, m.ActiveSummaryText = "", ""
	}
	if m.Head == s.Meta.Head && m.ActiveSummaryID == s.Meta.ActiveSummaryID {
		return nil
	}
	if err := writeMeta(tx.dir, m); err != nil {
		return err
	}
	return tx.reload()
}
