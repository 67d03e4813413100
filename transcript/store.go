package transcript

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// SummaryPrefix starts every summary node's content (docs/FORMAT.md §4).
const SummaryPrefix = "[Previous conversation summary]\n"

// SummaryName is the name of every summary node (docs/FORMAT.md §4).
const SummaryName = "context/summary"

// SummaryIDPrefix starts every summary node's id (docs/FORMAT.md §4).
const SummaryIDPrefix = "summary_"

// SummaryRole is the role a summary node carries: the model reads it as a
// user message in every provider format (docs/FORMAT.md).
const SummaryRole = RoleUser

// WriteOptions tune a write.
type WriteOptions struct {
	LockTimeout  time.Duration
	MaxLineBytes int
	// Command names the writer in the lock file (for "locked by" errors).
	Command string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
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
		return nil, &ParseError{File: dir, Msg: err.Error()}
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
	m := Meta{FormatVersion: FormatVersion, Model: model, CreatedAt: opts.now().UTC().Format(time.RFC3339), NodesBytes: &zero}
	if err := writeMeta(dir, m); err != nil {
		return nil, &ParseError{File: filepath.Join(dir, MetaFile), Msg: err.Error()}
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
	if _, err := readMeta(dir); err != nil {
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
	for _, p := range append(stale, lfStale...) {
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
	return tx.Warnings, err
}

func (tx *Tx) reload() error {
	if tx.s != nil {
		tx.s.Close()
	}
	s, err := Open(tx.dir, OpenOptions{MaxLineBytes: tx.opts.MaxLineBytes, Context: tx.ctx})
	if err != nil {
		return err
	}
	tx.s = s
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
			return &ParseError{File: metaPath, Line: s.MetaKeyLine(k.key), NodeID: k.id,
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
		return &ParseError{File: path, Msg: "reading the interrupted write: " + err.Error()}
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
		return "", &ParseError{File: lf, Msg: "is not a directory; ctxfold keeps recovered bytes there"}
	}
	name := fmt.Sprintf("%s-%s.jsonl", prefix, now.UTC().Format("20060102T150405.000000000Z"))
	if err := writeFileAtomic(lf, name, data); err != nil {
		return "", err
	}
	return filepath.Join(lf, name), nil
}

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
func (tx *Tx) Append(nodes []Node, opts AppendOptions) (*AppendResult, error) {
	if len(nodes) == 0 {
		return &AppendResult{Head: tx.s.Meta.Head}, nil
	}
	if !tx.checked && !opts.AllowBrokenGraph {
		// Once per transaction: its own validated appends keep the graph
		// sound, so a long import in chunks pays for one check.
		if err := tx.s.checkIntegrity(); err != nil {
			return nil, err
		}
		tx.checked = true
	}
	s := tx.s
	meta := s.Meta
	batch := map[string]*Node{}
	batchIdx := map[string]int{}
	head := meta.Head
	startHead := head
	prev := head
	for i := range nodes {
		if err := tx.interrupted(i); err != nil {
			return nil, err
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
		if field := invalidUTF8Field(n); field != "" {
			return nil, &ValidationError{Index: pos, NodeID: n.ID, Msg: fmt.Sprintf("invalid UTF-8 in %s; ctxfold stores UTF-8 only (docs/FORMAT.md §7)", field)}
		}
		if err := tx.validate(n, batch, pos, opts); err != nil {
			return nil, err
		}
		batch[n.ID] = n
		batchIdx[n.ID] = i
		if n.IsSummary() {
			meta.ActiveSummaryID = n.ID
			meta.ActiveSummaryText = strings.TrimPrefix(n.Content.PlainText(), SummaryPrefix)
		} else {
			// docs/FORMAT.md §1: append advances HEAD only on chain extension, and a
			// spawned (caller) turn never moves it.
			if n.Caller == "" && n.Predecessor == head {
				head = n.ID
			}
			prev = n.ID
		}
	}
	var buf bytes.Buffer
	maxLine := tx.opts.MaxLineBytes
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes
	}
	refs := make([]NodeRef, len(nodes))
	line := s.Len() + len(s.Duplicates)
	if s.unterminated && s.CommittedBytes > 0 {
		// The last committed line lacks its newline (a hand-written file):
		// end it first so the batch starts on a line of its own.
		buf.WriteByte('\n')
	}
	for i := range nodes {
		if err := tx.interrupted(i); err != nil {
			return nil, err
		}
		encoded, err := encodeLine(&nodes[i])
		if err != nil {
			return nil, &ValidationError{Index: i + 1, NodeID: nodes[i].ID, Msg: err.Error()}
		}
		if len(encoded) > maxLine {
			return nil, &ValidationError{Index: i + 1, NodeID: nodes[i].ID, Msg: fmt.Sprintf("encoded node is %d bytes, over the %d-byte line limit", len(encoded), maxLine)}
		}
		refs[i] = refOf(&nodes[i])
		refs[i].Line, refs[i].Offset, refs[i].Length = line+i+1, s.CommittedBytes+int64(buf.Len()), len(encoded)
		buf.Write(encoded)
		buf.WriteByte('\n')
	}
	if err := tx.writeNodes(buf.Bytes(), meta, head, refs); err != nil {
		return nil, err
	}
	ids := make([]string, len(nodes))
	for i := range nodes {
		ids[i] = nodes[i].ID
	}
	return &AppendResult{IDs: ids, Head: head, HeadMoved: head != startHead}, nil
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

func encodeLine(n *Node) ([]byte, error) {
	// MarshalJSON directly: json.Marshal would HTML-escape its output.
	raw, err := n.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Compact(&out, raw); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
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
		return &ParseError{File: path, Msg: "write: " + err.Error()}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return &ParseError{File: path, Msg: "fsync: " + err.Error()}
	}
	if err := f.Close(); err != nil {
		return &ParseError{File: path, Msg: err.Error()}
	}
	size := s.CommittedBytes + int64(len(data))
	meta.NodesBytes = &size
	meta.Head = head
	if err := writeMeta(tx.dir, meta); err != nil {
		return &ParseError{File: filepath.Join(tx.dir, MetaFile), Msg: err.Error()}
	}
	// Extend the snapshot in place rather than re-reading the file, so a
	// long import appending in chunks stays linear.
	s.Meta = meta
	s.CommittedBytes = size
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

// validate applies the append rules to n against the snapshot plus the
// batch written so far. pos is n's 1-based batch position (0 for one node).
func (tx *Tx) validate(n *Node, batch map[string]*Node, pos int, opts AppendOptions) error {
	s := tx.s
	fail := func(format string, args ...any) error {
		return &ValidationError{Index: pos, NodeID: n.ID, Msg: fmt.Sprintf(format, args...)}
	}
	if !n.Role.Valid() {
		return fail("role must be system, user, assistant or tool, got %q", n.Role)
	}
	if _, dup := s.Lookup(n.ID); dup {
		return fail("duplicate id: the session already has a node %q", n.ID)
	}
	if _, dup := batch[n.ID]; dup {
		return fail("duplicate id: the batch holds %q twice", n.ID)
	}
	exists := func(id string) bool {
		_, a := s.Lookup(id)
		_, b := batch[id]
		return a || b
	}
	if n.Predecessor != "" && !exists(n.Predecessor) {
		return fail("predecessor %q not found", n.Predecessor)
	}
	if n.Caller != "" && !exists(n.Caller) {
		return fail("caller %q not found", n.Caller)
	}
	// docs/FORMAT.md §4: a summary is a stand-in spliced beside the chain; turns keep
	// following real turns (the kept tail keeps its predecessors), so no
	// node may follow or be spawned by a summary.
	isSummary := func(id string) bool {
		if bn, ok := batch[id]; ok {
			return bn.IsSummary()
		}
		i, ok := s.Lookup(id)
		return ok && s.IsSummary(i)
	}
	if n.Predecessor != "" && isSummary(n.Predecessor) {
		return fail("predecessor %q is a summary node; a turn follows a real turn (docs/FORMAT.md §4)", n.Predecessor)
	}
	if n.Caller != "" && isSummary(n.Caller) {
		return fail("caller %q is a summary node", n.Caller)
	}
	if n.IsSummary() {
		return tx.validateSummary(n, batch, fail)
	}
	if strings.HasPrefix(n.ID, SummaryIDPrefix) {
		return fail("ids starting %q are reserved for summary nodes (metadata.compaction: true)", SummaryIDPrefix)
	}
	for _, c := range n.AllToolCalls() {
		if c.ID == "" {
			return fail("a tool call has no id")
		}
		if n.Role != RoleAssistant {
			return fail("only assistant nodes make tool calls (role is %s)", n.Role)
		}
	}
	if n.Role == RoleTool && n.ToolCallID == "" {
		return fail("a tool node needs tool_call_id")
	}
	if n.Role != RoleTool && n.ToolCallID != "" {
		// It would be silently ignored: results on other roles are
		// tool_result blocks.
		return fail("only tool nodes carry tool_call_id (role is %s); use a tool_result block", n.Role)
	}
	results := n.ToolResults()
	if len(results) > 0 {
		left, err := tx.checkOpenCalls(n, results, batch)
		if err != nil {
			return fail("%v", err)
		}
		if len(left) > 0 && len(n.AllToolCalls()) > 0 && n.Caller == "" && !opts.AsRecorded {
			// A node that answers some calls and makes new ones ends the
			// group: the calls it leaves open are never answered.
			return fail("tool call(s) %s have no result yet: a node that makes tool calls must answer every call still open before it", quoteList(left))
		}
	} else if n.Caller == "" && !opts.AsRecorded {
		// A spawned turn (caller set) runs inside its caller's open call,
		// which is answered on the caller's branch: it is exempt.
		if err := tx.checkAnswered(n, batch); err != nil {
			return fail("%v", err)
		}
	}
	return nil
}

// checkOpenCalls: every tool result must answer a call of the nearest
// node up the predecessor chain that makes calls and is still unanswered
// there (the tool-call model, transcript/tools.go).
// It returns the calls still open after n's results, in call order.
func (tx *Tx) checkOpenCalls(n *Node, results []ToolResult, batch map[string]*Node) ([]string, error) {
	_, calls, answered, err := tx.callsBefore(n.Predecessor, batch)
	if err != nil {
		return nil, err
	}
	if calls == nil {
		return nil, fmt.Errorf("tool result for %q has no matching open tool call", results[0].ToolCallID)
	}
	open := map[string]bool{}
	for _, c := range OpenCalls(calls, answered) {
		open[c] = true
	}
	for _, r := range results {
		if !open[r.ToolCallID] {
			if answered[r.ToolCallID] {
				return nil, fmt.Errorf("tool call %q already has a result", r.ToolCallID)
			}
			return nil, fmt.Errorf("tool result for %q has no matching open tool call (the open calls are %s)", r.ToolCallID, quoteList(keys(open)))
		}
		delete(open, r.ToolCallID)
	}
	var left []string
	for _, c := range calls {
		if open[c] {
			left = append(left, c)
		}
	}
	return left, nil
}

// checkAnswered: a turn that carries no results may not follow a node
// whose tool calls are still unanswered on this chain; every provider
// rejects such a request and verify reports tool_call_unanswered.
func (tx *Tx) checkAnswered(n *Node, batch map[string]*Node) error {
	owner, calls, answered, err := tx.callsBefore(n.Predecessor, batch)
	if err != nil {
		return err
	}
	open := OpenCalls(calls, answered)
	if len(open) == 0 {
		return nil
	}
	return fmt.Errorf("tool call(s) %s of %q have no result yet: append their results (role tool with tool_call_id, or tool_result blocks) before the next %s turn", quoteList(open), owner, n.Role)
}

// callsBefore is CallsBefore over the batch and the committed index.
func (tx *Tx) callsBefore(id string, batch map[string]*Node) (owner string, calls []string, answered map[string]bool, err error) {
	return CallsBefore(id, func(id string) (ToolFacts, string, bool) {
		if id == "" {
			return ToolFacts{}, "", false
		}
		if bn, ok := batch[id]; ok {
			return bn.ToolFacts(), bn.Predecessor, true
		}
		if ref, ok := tx.s.RefByID(id); ok {
			return ref.ToolFacts(), ref.Predecessor, true
		}
		return ToolFacts{}, "", false
	}, 1_000_000)
}

// validateSummary applies docs/FORMAT.md §4 to a summary node.
func (tx *Tx) validateSummary(n *Node, batch map[string]*Node, fail func(string, ...any) error) error {
	if !strings.HasPrefix(n.ID, SummaryIDPrefix) {
		return fail("a summary node's id must start with %q", SummaryIDPrefix)
	}
	if n.Role != SummaryRole {
		return fail("a summary node has role %q, got %q", SummaryRole, n.Role)
	}
	if n.Name != SummaryName {
		return fail("a summary node is named %q, got %q", SummaryName, n.Name)
	}
	if !strings.HasPrefix(n.Content.PlainText(), SummaryPrefix) {
		return fail(`a summary's content must begin "%s\n"`, strings.TrimSuffix(SummaryPrefix, "\n"))
	}
	if n.Caller != "" {
		return fail("a summary node has no caller")
	}
	if len(n.AllToolCalls()) > 0 || len(n.ToolResults()) > 0 || n.ToolCallID != "" {
		return fail("a summary node carries no tool calls or results")
	}
	covers := n.CoversIDs()
	if _, ok := n.Metadata["covers_ids"]; ok && covers == nil {
		return fail("metadata.covers_ids must be an array of ids")
	}
	if len(covers) == 0 {
		return fail("metadata.covers_ids is empty")
	}
	type info struct {
		pred    string
		summary bool
	}
	lookup := func(id string) (info, bool) {
		if bn, ok := batch[id]; ok {
			return info{bn.Predecessor, bn.IsSummary()}, true
		}
		if ref, ok := tx.s.RefByID(id); ok {
			return info{ref.Predecessor, ref.Summary}, true
		}
		return info{}, false
	}
	seen := map[string]bool{}
	for i, id := range covers {
		in, ok := lookup(id)
		if !ok {
			return fail("covers_ids[%d] %q not found", i, id)
		}
		if in.summary {
			return fail("covers_ids[%d] %q is a summary; coverage names real turns only", i, id)
		}
		if seen[id] {
			return fail("covers_ids names %q twice", id)
		}
		seen[id] = true
		if i == 0 {
			if n.Predecessor != in.pred {
				return fail("predecessor must be the predecessor of the first covered node (%s), got %s", quoteOrNull(in.pred), quoteOrNull(n.Predecessor))
			}
		} else if in.pred != covers[i-1] {
			return fail("covers_ids is not a contiguous chain: %q does not follow %q", id, covers[i-1])
		}
	}
	return nil
}

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
	if err := writeMeta(tx.dir, m); err != nil {
		return err
	}
	return tx.reload()
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
	if err := writeMeta(tx.dir, m); err != nil {
		return err
	}
	return tx.reload()
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
		return &ParseError{File: path, Msg: err.Error()}
	}
	return f.Sync()
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

// NewID returns a fresh random node id ("n" + 16 hex digits; summaries get
// the "summary_" prefix).
func NewID(n *Node) string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	if n != nil && n.IsSummary() {
		return SummaryIDPrefix + hex.EncodeToString(b[:])
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
		return nil, &ParseError{File: path, Msg: fmt.Sprintf("missing, but session.json records %d committed bytes; nothing to truncate", *meta.NodesBytes)}
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
