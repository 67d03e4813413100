// Append: the one way nodes enter a session, with its result and options.

package store

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ctxfold/ctxfold/transcript"
)

// AppendResult reports one append.
type AppendResult struct {
	IDs []string
	// Head is HEAD after the append; HeadMoved whether the append moved it.
	Head      string
	HeadMoved bool
}

// Append validates and appends a batch of nodes, all or nothing (see
// package doc). Missing ids are generated; a node without a predecessor
// follows the node before it in the batch, or HEAD for the first one,
// unless it is a root by AppendOptions.RootFirst or Roots.
func (tx *Tx) Append(nodes []transcript.Node, opts AppendOptions) (*AppendResult, error) {
	if len(nodes) == 0 {
		return &AppendResult{Head: tx.s.Meta.Head}, nil
	}
	if !tx.checked && !opts.AllowBrokenGraph {
		// Once per transaction: its own validated appends keep the graph
		// sound, so a long import in chunks pays for one check.
		if err := tx.s.writeCheck(); err != nil {
			return nil, err
		}
		tx.checked = true
	}
	startHead := tx.s.Meta.Head
	meta, head, err := tx.prepareBatch(nodes, opts)
	if err != nil {
		return nil, err
	}
	data, refs, err := tx.encodeBatch(nodes)
	if err != nil {
		return nil, err
	}
	if err := tx.writeNodes(data, meta, head, refs); err != nil {
		return nil, err
	}
	for i := len(nodes) - 1; i >= 0; i-- {
		if sp, ok := nodes[i].CoversSpan(); ok && nodes[i].IsSummary() {
			tx.covered = coverMemo{span: sp, pred: nodes[i].Predecessor}
			break
		}
	}
	ids := make([]string, len(nodes))
	for i := range nodes {
		ids[i] = nodes[i].ID
	}
	return &AppendResult{IDs: ids, Head: head, HeadMoved: head != startHead}, nil
}

// prepareBatch fills in each node's defaults and validates it against the
// snapshot plus the nodes before it, returning the meta and HEAD the batch
// leaves behind. Nothing is written, so a refusal leaves the session as it
// was.
func (tx *Tx) prepareBatch(nodes []transcript.Node, opts AppendOptions) (Meta, string, error) {
	meta := tx.s.Meta
	batch := map[string]*transcript.Node{}
	head := meta.Head
	prev := head
	for i := range nodes {
		if err := tx.interrupted(i); err != nil {
			return Meta{}, "", err
		}
		n := &nodes[i]
		pos := 0
		if len(nodes) > 1 {
			pos = i + 1
		}
		if n.ID == "" {
			n.ID = NewID(n)
		}
		root := (i == 0 && opts.RootFirst) || (i < len(opts.Roots) && opts.Roots[i])
		if n.Predecessor == "" && !n.IsSummary() && !root {
			n.Predecessor = prev
		}
		if n.CreatedAt == "" && opts.StampTime {
			n.CreatedAt = tx.opts.now().UTC().Format(time.RFC3339Nano)
		}
		if field := transcript.InvalidUTF8Field(n); field != "" {
			return Meta{}, "", &ValidationError{Index: pos, NodeID: n.ID, Msg: fmt.Sprintf("invalid UTF-8 in %s; ctxfold stores UTF-8 only (docs/FORMAT.md §7)", field)}
		}
		if err := tx.validate(n, batch, pos, opts); err != nil {
			return Meta{}, "", err
		}
		batch[n.ID] = n
		if n.IsSummary() {
			// A reader of version 1 would take the span's summary for one
			// without coverage (docs/FORMAT.md §6).
			meta.FormatVersion = max(meta.FormatVersion, FormatVersion)
			meta.ActiveSummaryID = n.ID
			meta.ActiveSummaryText = strings.TrimPrefix(n.Content.PlainText(), transcript.SummaryPrefix)
		} else {
			// docs/FORMAT.md §1: append advances HEAD only on chain extension, and a
			// spawned (caller) turn never moves it.
			if n.Caller == "" && n.Predecessor == head {
				head = n.ID
			}
			prev = n.ID
		}
	}
	return meta, head, nil
}

// encodeBatch encodes the validated nodes into the bytes to append and the
// index entries they will have once committed; a node over the line limit
// refuses the whole batch before anything is written. Each line is
// transcript.AppendLine's: json.Compact over Node.MarshalJSON, written
// without reflection.
func (tx *Tx) encodeBatch(nodes []transcript.Node) ([]byte, []NodeRef, error) {
	s := tx.s
	maxLine := tx.opts.MaxLineBytes
	if maxLine <= 0 {
		maxLine = transcript.DefaultMaxLineBytes
	}
	refs := make([]NodeRef, len(nodes))
	line := s.Len() + len(s.Duplicates)
	buf := make([]byte, 0, batchSizeHint(nodes))
	if s.unterminated && s.CommittedBytes > 0 {
		// The last committed line lacks its newline (a hand-written file):
		// end it first so the batch starts on a line of its own.
		buf = append(buf, '\n')
	}
	for i := range nodes {
		if err := tx.interrupted(i); err != nil {
			return nil, nil, err
		}
		start := len(buf)
		var err error
		if buf, err = transcript.AppendLine(buf, &nodes[i]); err != nil {
			return nil, nil, &ValidationError{Index: i + 1, NodeID: nodes[i].ID, Msg: err.Error()}
		}
		n := len(buf) - start
		if n > maxLine {
			return nil, nil, &ValidationError{Index: i + 1, NodeID: nodes[i].ID, Msg: fmt.Sprintf("encoded node is %d bytes, over the %d-byte line limit", n, maxLine)}
		}
		refs[i] = refOf(&nodes[i])
		refs[i].Line, refs[i].Offset, refs[i].Length = line+i+1, s.CommittedBytes+int64(start), n
		buf = append(buf, '\n')
	}
	return buf, refs, nil
}

// batchSizeHint guesses a batch's encoded size from its text, so the
// buffer rarely grows while it is filled.
func batchSizeHint(nodes []transcript.Node) int {
	n := 0
	for i := range nodes {
		n += 160 + len(nodes[i].Content.Text)
		for _, b := range nodes[i].Content.Blocks {
			n += 64 + len(b.Text) + len(b.Arguments)
		}
	}
	return n + n/8
}

// AppendOptions tune Append.
type AppendOptions struct {
	// RootFirst makes the first node a root even when it has no predecessor
	// and the session has a HEAD.
	RootFirst bool
	// Roots[i] makes node i a root although it has no predecessor (an
	// explicit "predecessor": null in a batch file; see ReadBatch).
	Roots []bool
	// StampTime sets created_at on nodes that lack it.
	StampTime bool
	// AsRecorded takes imported history as it was recorded: a turn that
	// follows tool calls the export never answered (an interrupted or
	// damaged transcript) is kept, and verify reports it as
	// tool_call_unanswered, instead of being refused. New turns written by
	// hand or by ctxfold itself are always held to the rule.
	AsRecorded bool
	// AllowBrokenGraph skips the refusal of a session whose graph is
	// broken (checkIntegrity), for a tool that mends it by appending what
	// it lacks (a missing predecessor). Every command leaves it false.
	AllowBrokenGraph bool
}

// writeNodes appends data in one write, fsyncs it, then commits it by
// rewriting session.json with the new committed length and HEAD. A crash
// before the meta rename leaves an uncommitted tail that readers ignore.
func (tx *Tx) writeNodes(data []byte, meta Meta, head string, refs []NodeRef) error {
	s := tx.s
	path := s.NodesPath()
	// Last chance to honour Ctrl-C: once the bytes are written the batch
	// is committed below, so a canceled write stops here with nothing on
	// disk (a long import's encoding may outlast the interrupt).
	if tx.ctx != nil {
		if err := tx.ctx.Err(); err != nil {
			return err
		}
	}
	if err := tx.recoverTail(); err != nil {
		return err
	}
	f, err := openForWrite(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return fileErr(path, err)
	}
	if _, err := f.WriteAt(data, s.CommittedBytes); err != nil {
		f.Close()
		return &WriteError{File: path, Op: "write", Err: err}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return &WriteError{File: path, Op: "fsync", Err: err}
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return &transcript.ParseError{File: path, Msg: err.Error()}
	}
	if err := f.Close(); err != nil {
		return &WriteError{File: path, Err: err}
	}
	size := s.CommittedBytes + int64(len(data))
	meta.NodesBytes = &size
	meta.Head = head
	chain := s.chain.extendBytes(data)
	meta.setChain(chain)
	meta.NodesStat = nil
	if fp, ok := statOf(st); ok && fp.Size == size {
		meta.NodesStat = &fp
	}
	if err := writeMeta(tx.dir, meta); err != nil {
		return err
	}
	// Extend the snapshot in place rather than re-reading the file, so a
	// long import appending in chunks stays linear.
	s.Meta = meta
	s.CommittedBytes = size
	s.chain = chain
	s.unterminated = false
	for _, r := range refs {
		// Validated against the snapshot: no duplicates, links resolve.
		if perr := s.addRef(r); perr != nil {
			return perr
		}
	}
	s.resolveLinks()
	return nil
}
