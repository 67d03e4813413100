// The writes of a transaction other than Append: moving HEAD, rewriting
// meta and appending to the event log.

package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// SetHead moves HEAD: the one explicit mover (docs/FORMAT.md §1). HEAD cannot land on
// a summary node or a missing id.
func (tx *Tx) SetHead(id string) error {
	ref, ok := tx.s.RefByID(id)
	if !ok {
		return &ValidationError{NodeID: id, Msg: "no such node; HEAD unchanged"}
	}
	if ref.Summary {
		return &ValidationError{NodeID: id, Msg: "is a summary node; HEAD never rests on a summary (docs/FORMAT.md §1); HEAD unchanged"}
	}
	if tx.s.Meta.Head == id {
		return nil
	}
	m := tx.s.Meta
	m.Head = id
	return tx.commitMeta(m)
}

// commitMeta writes session.json and makes m the open session's meta.
// Only the meta changed, so the index stays as it is: opening the whole
// session again took two of a live refresh's five commits' time
// (docs/BENCHMARKS.md, "step 4").
func (tx *Tx) commitMeta(m Meta) error {
	if err := writeMeta(tx.dir, m); err != nil {
		return err
	}
	tx.s.Meta = m
	return nil
}

// UpdateMeta rewrites session.json through fn. fn may not move HEAD, the
// active summary or the committed length: those change only through
// Append and SetHead.
func (tx *Tx) UpdateMeta(fn func(*Meta)) error {
	m := tx.s.Meta
	extra := map[string]json.RawMessage{}
	for k, v := range m.Extra {
		extra[k] = v
	}
	m.Extra = extra
	fn(&m)
	old := tx.s.Meta
	if m.Head != old.Head || m.ActiveSummaryID != old.ActiveSummaryID || !sameInt(m.NodesBytes, old.NodesBytes) || m.FormatVersion != old.FormatVersion {
		return &ValidationError{Msg: "a meta update may not change head, active summary, format version or committed length"}
	}
	return tx.commitMeta(m)
}

// AppendEvent appends one JSON object to events.jsonl in a single write
// and fsyncs it.
func (tx *Tx) AppendEvent(ev any) error {
	raw, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	var line bytes.Buffer
	if err := json.Compact(&line, raw); err != nil {
		return err
	}
	if line.Len() == 0 || line.Bytes()[0] != '{' {
		return fmt.Errorf("an event must be a JSON object")
	}
	line.WriteByte('\n')
	path := filepath.Join(tx.dir, EventsFile)
	if err := tx.repairEventsTail(path); err != nil {
		return err
	}
	f, err := openForWrite(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fileErr(path, err)
	}
	defer f.Close()
	if _, err := f.Write(line.Bytes()); err != nil {
		return &WriteError{File: path, Op: "write", Err: err}
	}
	if err := f.Sync(); err != nil {
		return &WriteError{File: path, Op: "fsync", Err: err}
	}
	return nil
}

// repairEventsTail moves a torn last line of events.jsonl (a writer killed
// mid-event) to lost+found/ and truncates the file back to its last
// newline, so the torn bytes neither glue onto the next event nor become a
// malformed line in the middle that would stop every later read.
func (tx *Tx) repairEventsTail(path string) error {
	f, err := openForWrite(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return err
	}
	// Scan back for the last newline, one block at a time.
	end := st.Size()
	cut := int64(0)
	buf := make([]byte, 64<<10)
	for pos := end; pos > 0; {
		n := int64(len(buf))
		if pos < n {
			n = pos
		}
		pos -= n
		if _, err := f.ReadAt(buf[:n], pos); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if k := bytes.LastIndexByte(buf[:n], '\n'); k >= 0 {
			cut = pos + int64(k) + 1
			break
		}
	}
	if cut == end {
		return nil
	}
	tail := make([]byte, end-cut)
	if _, err := f.ReadAt(tail, cut); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	name, err := tx.keepLost("events", tail)
	if err != nil {
		return err
	}
	if err := f.Truncate(cut); err != nil {
		return err
	}
	tx.Warnings = append(tx.Warnings, Warning{File: path, Msg: fmt.Sprintf("moved %d bytes of an interrupted event write to %s", len(tail), name)})
	return f.Sync()
}
