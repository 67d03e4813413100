package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/ctxfold/ctxfold/transcript"
)

// NodeRef is what the index keeps of a node: its structure and where its
// line is, not its content. Content is read on demand with Session.Node.
type NodeRef struct {
	ID          string
	Predecessor string
	Caller      string
	Role        transcript.Role
	Name        string
	// Summary is metadata.compaction == true; CoversIDs its
	// metadata.covers_ids (format version 1) and CoversSpan its
	// metadata.covers_span (version 2, the zero span when absent): the
	// stored form, which dag expands (docs/FORMAT.md §4).
	Summary    bool
	CoversIDs  []string
	CoversSpan transcript.CoverSpan
	// ToolCallIDs are the calls this node makes; ResultIDs the call ids of
	// the tool results it carries.
	ToolCallIDs []string
	ResultIDs   []string
	// HasText is true when the node carries text beside tool results (a
	// user turn that also answers tool calls).
	HasText bool
	Line    int
	Offset  int64
	Length  int
}

// CoverCount is how many nodes a summary covers, in either stored form.
func (r NodeRef) CoverCount() int {
	if r.CoversSpan.Valid() {
		return r.CoversSpan.Count
	}
	return len(r.CoversIDs)
}

// Warning is something odd that did not stop reading.
type Warning struct {
	File string
	Line int
	Msg  string
}

func (w Warning) String() string {
	if w.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", w.File, w.Line, w.Msg)
	}
	return fmt.Sprintf("%s: %s", w.File, w.Msg)
}

// Duplicate records a second line holding an id already seen.
type Duplicate struct {
	ID        string
	FirstLine int
	Line      int
}

// Session is a read-only snapshot of a session directory: its meta and the
// index of its committed nodes. It holds nodes.jsonl open for Node reads;
// call Close when done.
type Session struct {
	// openCtx is OpenOptions.Context while Open indexes (index_parallel.go).
	openCtx    context.Context
	Dir        string
	Meta       Meta
	Duplicates []Duplicate
	Warnings   []Warning
	// CommittedBytes is the length of nodes.jsonl that counts; TailBytes
	// what follows it (an interrupted write, or a torn last line).
	CommittedBytes int64
	TailBytes      int64
	// The index (refindex.go): one record per node, in file order.
	recs []refRec
	ids  []byte // every node's id, back to back
	byID idTable
	pool []string
	// The snapshot's tool ids (snapshot_load.go): basePool of them, the
	// end of each in poolEnds, their bytes in poolBytes; pool holds the
	// rest.
	basePool  int
	poolEnds  []byte
	poolBytes []byte
	names     []nameRec
	nameArena []byte
	covers    map[int32][]string
	spans     map[int32]transcript.CoverSpan
	// bigCounts holds the id counts of nodes with manyIDs or more.
	bigCounts map[int32][2]int32
	dangling  map[int32]danglingLinks
	pending   []pendingLink
	f         *os.File
	// unterminated is true when the last committed line has no newline (a
	// hand-written file): the next append must start a new line first, or
	// it would glue its node onto that line.
	unterminated bool
	// chain is the digest state of the committed bytes once a writer or
	// the snapshot check knew it (nodehash.go); nil otherwise.
	chain chainState
	// mapping is the snapshot's mapping when the index points into it
	// (snapshot_mmap_linux.go). A session a writer opens for its
	// transaction is transient: its accessors hand out copies of the
	// strings in the mapping, and Close unmaps it. Otherwise a process
	// writing many sessions (an archive run, a long-lived server) kept
	// every snapshot it ever opened mapped, its copied-on-write pages
	// resident (docs/BENCHMARKS.md, "The first archive's memory").
	mapping   []byte
	transient bool
	// stats says how the index was built; snapSound and snapRecs are the
	// snapshot's verdict on its graph and its node count (writeCheck).
	stats     OpenStats
	snapSound bool
	snapRecs  int
}

// OpenOptions tune reading.
type OpenOptions struct {
	MaxLineBytes int
	// Context, when set, interrupts indexing a large nodes.jsonl (seconds
	// for 100 MB): Open then returns its error.
	Context context.Context
	// transient: the session is a writer's, closed when its transaction
	// ends (Session.transient).
	transient bool
}

// Open reads a session directory's meta and indexes its nodes, streaming
// nodes.jsonl line by line. Bad input is a *ParseError naming file and line.
func Open(dir string, opts OpenOptions) (*Session, error) {
	meta, err := readMeta(dir)
	if err != nil {
		return nil, err
	}
	return openWithMeta(dir, meta, opts)
}

func openWithMeta(dir string, meta Meta, opts OpenOptions) (*Session, error) {
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = transcript.DefaultMaxLineBytes
	}
	s := &Session{Dir: dir, Meta: meta, openCtx: opts.Context, transient: opts.transient}
	defer func() { s.openCtx = nil }()
	path := s.NodesPath()
	f, err := openRegular(path)
	if errors.Is(err, os.ErrNotExist) {
		if meta.NodesBytes != nil && *meta.NodesBytes > 0 {
			return nil, &transcript.ParseError{File: path, Msg: fmt.Sprintf("missing, but session.json records %d committed bytes", *meta.NodesBytes)}
		}
		return s, nil
	}
	if pe := (*transcript.ParseError)(nil); errors.As(err, &pe) {
		return nil, pe
	}
	if err != nil {
		return nil, &transcript.ParseError{File: path, Msg: err.Error()}
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, &transcript.ParseError{File: path, Msg: err.Error()}
	}
	if st.IsDir() {
		f.Close()
		return nil, &transcript.ParseError{File: path, Msg: "is a directory; the session's nodes must be a regular file"}
	}
	limit := st.Size()
	if meta.NodesBytes != nil {
		if *meta.NodesBytes > st.Size() {
			f.Close()
			return nil, &transcript.ParseError{File: path, Msg: fmt.Sprintf("file is %d bytes but session.json records %d committed bytes: data was removed outside ctxfold; 'ctxfold repair %s' truncates it to its last complete line and keeps the rest in %s/", st.Size(), *meta.NodesBytes, dir, LostFound)}
		}
		limit = *meta.NodesBytes
	}
	// A session with a committed length may have an index snapshot
	// (docs/FORMAT.md §1); one without is hand-written and small.
	if meta.NodesBytes == nil || snapshotsOff || !s.fromSnapshot(f, st, limit, opts.MaxLineBytes) {
		if err := s.index(f, limit, meta.NodesBytes != nil, opts.MaxLineBytes); err != nil {
			f.Close()
			return nil, err
		}
	}
	if meta.NodesBytes != nil && st.Size() > limit {
		s.TailBytes = st.Size() - limit
		// A live writer between its node write and its commit leaves the
		// same tail as a dead one: warn only when no writer holds the lock.
		if !writerActive(dir) {
			msg := fmt.Sprintf("%d bytes after the last committed write are ignored (an interrupted write); 'ctxfold repair' moves them to %s/", s.TailBytes, LostFound)
			if _, ok := s.Lookup(meta.Head); meta.Head != "" && !ok {
				// Not an interrupted write: HEAD is among them, so the
				// recorded length is what is wrong (recoverTail refuses).
				msg = fmt.Sprintf("%d bytes after the committed length session.json records are ignored, but HEAD is not among the committed nodes: nodes_bytes is wrong (edited by hand?); fix it in %s", s.TailBytes, MetaFile)
			}
			s.Warnings = append(s.Warnings, Warning{File: path, Line: s.Len() + len(s.Duplicates) + 1, Msg: msg})
		}
	}
	s.f = f
	return s, nil
}

func (s *Session) index(f *os.File, limit int64, committed bool, maxLine int) error {
	var err error
	if workers := indexWorkerCount(limit); workers > 1 {
		err = s.indexParallel(f, limit, committed, maxLine, workers)
	} else {
		err = s.indexFrom(io.LimitReader(f, limit), 0, 0, indexBufSize(limit), committed, maxLine)
	}
	s.resolveLinks()
	return err
}

// indexBufSize is the read buffer for a file of limit committed bytes. It
// depends on the whole file, not on where reading starts, so a read
// resumed mid-file (indexParallel's tail) splits long lines the same way.
func indexBufSize(limit int64) int {
	// A 1 MiB buffer for big files; small sessions (most opens) need less.
	bufSize := 1 << 20
	if limit < int64(bufSize) {
		bufSize = max(int(limit)+1, 4096)
	}
	return bufSize
}

// indexFrom indexes the lines of src, which starts at byte offset of
// nodes.jsonl, after line lines already indexed.
func (s *Session) indexFrom(src io.Reader, offset int64, line, bufSize int, committed bool, maxLine int) error {
	path := s.NodesPath()
	r := bufio.NewReaderSize(src, bufSize)
	var long []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			if len(long)+len(chunk) > maxLine {
				return &transcript.ParseError{File: path, Line: line + 1, Msg: lineTooLongMsg(maxLine)}
			}
			long = append(long, chunk...)
			continue
		}
		if len(long) > 0 {
			long = append(long, chunk...)
			chunk = long
		}
		if len(chunk) == 0 && err == io.EOF {
			break
		}
		line++
		if len(chunk)-1 > maxLine {
			return &transcript.ParseError{File: path, Line: line, Msg: lineTooLongMsg(maxLine)}
		}
		complete := len(chunk) > 0 && chunk[len(chunk)-1] == '\n'
		body := bytes.TrimSuffix(chunk, []byte("\n"))
		body = bytes.TrimSuffix(body, []byte("\r"))
		perr := s.addLine(body, line, offset)
		if perr != nil && !complete && !committed {
			// A torn last line: the writer died mid-line. Reading ignores
			// it; 'ctxfold repair' truncates it.
			s.TailBytes = int64(len(chunk))
			s.Warnings = append(s.Warnings, Warning{File: path, Line: line, Msg: "torn last line ignored (an interrupted write); 'ctxfold repair' removes it"})
			break
		}
		if perr != nil {
			return perr
		}
		offset += int64(len(chunk))
		s.unterminated = !complete
		long = long[:0]
		if err == io.EOF {
			break
		}
		if err != nil {
			return &transcript.ParseError{File: path, Line: line, Msg: err.Error()}
		}
	}
	s.CommittedBytes = offset
	return nil
}

func (s *Session) addLine(body []byte, line int, offset int64) *transcript.ParseError {
	ref, perr := parseLine(s.NodesPath(), body, line, offset)
	if perr != nil {
		return perr
	}
	return s.addRef(ref)
}

// parseLine decodes one line of nodes.jsonl (body without its line end)
// into its index entry. It touches no Session state, so index workers call
// it concurrently.
func parseLine(path string, body []byte, line int, offset int64) (NodeRef, *transcript.ParseError) {
	if len(bytes.TrimSpace(body)) == 0 {
		return NodeRef{}, &transcript.ParseError{File: path, Line: line, Msg: "empty line; expected one JSON node"}
	}
	if pos := transcript.FirstInvalidUTF8(body); pos > 0 {
		return NodeRef{}, &transcript.ParseError{File: path, Line: line, Msg: transcript.InvalidUTF8Msg(pos)}
	}
	if ref, ok := indexRef(body); ok {
		ref.Line, ref.Offset, ref.Length = line, offset, len(body)
		return ref, nil
	}
	// A line the fast path does not take: the full decode, which also
	// gives the exact error.
	var n transcript.Node
	if err := n.UnmarshalJSON(body); err != nil {
		return NodeRef{}, &transcript.ParseError{File: path, Line: line, NodeID: n.ID, Msg: transcript.StripNodePrefix(err.Error(), n.ID)}
	}
	if n.ID == "" {
		return NodeRef{}, &transcript.ParseError{File: path, Line: line, Msg: "missing \"id\""}
	}
	ref := refOf(&n)
	ref.Line, ref.Offset, ref.Length = line, offset, len(body)
	return ref, nil
}

// refOf keeps as little per node as it can: an index holds a million of
// these. The role shares the constant's bytes instead of the decoded copy;
// id lists are allocated at their exact size and stay nil when empty.
func refOf(n *transcript.Node) NodeRef {
	ref := NodeRef{ID: n.ID, Predecessor: n.Predecessor, Caller: n.Caller, Role: internRole(n.Role), Name: n.Name}
	if n.IsSummary() {
		ref.Summary = true
		ref.CoversIDs = n.CoversIDs()
		ref.CoversSpan, _ = n.CoversSpan()
	}
	if calls := n.AllToolCalls(); len(calls) > 0 {
		ref.ToolCallIDs = make([]string, len(calls))
		for i, c := range calls {
			ref.ToolCallIDs[i] = c.ID
		}
	}
	if results := n.ToolResults(); len(results) > 0 {
		ref.ResultIDs = make([]string, len(results))
		for i, r := range results {
			ref.ResultIDs[i] = r.ToolCallID
		}
	}
	ref.HasText = n.HasText()
	return ref
}

func internRole(r transcript.Role) transcript.Role {
	switch r {
	case transcript.RoleSystem:
		return transcript.RoleSystem
	case transcript.RoleUser:
		return transcript.RoleUser
	case transcript.RoleAssistant:
		return transcript.RoleAssistant
	case transcript.RoleTool:
		return transcript.RoleTool
	}
	return r
}

// NodesPath is the path of nodes.jsonl.
func (s *Session) NodesPath() string { return filepath.Join(s.Dir, NodesFile) }

// EventsPath is the path of events.jsonl.
func (s *Session) EventsPath() string { return filepath.Join(s.Dir, EventsFile) }

// RawLine returns the stored bytes of the node at index i (no newline).
// It is safe for concurrent use.
func (s *Session) RawLine(i int) ([]byte, error) {
	r := &s.recs[i]
	if s.f == nil {
		return nil, fmt.Errorf("%s: session is closed", s.Dir)
	}
	buf := make([]byte, r.length)
	if _, err := s.f.ReadAt(buf, r.offset); err != nil {
		return nil, &transcript.ParseError{File: s.NodesPath(), Line: s.LineAt(i), NodeID: s.ID(i), Msg: "read: " + err.Error()}
	}
	return buf, nil
}

// LineSpan is where the stored line of node i lies in nodes.jsonl.
func (s *Session) LineSpan(i int) (offset int64, length int) {
	return s.recs[i].offset, int(s.recs[i].length)
}

// ReadLines reads the stored lines of the consecutive nodes first..last
// with one read, into buf when it is big enough. Node i's line is
// data[off−base : off−base+length] for (off, length) = LineSpan(i) and base
// = LineSpan(first)'s offset. It is safe for concurrent use.
func (s *Session) ReadLines(first, last int, buf []byte) (data []byte, err error) {
	if s.f == nil {
		return nil, fmt.Errorf("%s: session is closed", s.Dir)
	}
	a, b := &s.recs[first], &s.recs[last]
	n := int(b.offset + int64(b.length) - a.offset)
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := s.f.ReadAt(buf, a.offset); err != nil {
		return nil, &transcript.ParseError{File: s.NodesPath(), Line: s.LineAt(first), NodeID: s.ID(first), Msg: "read: " + err.Error()}
	}
	return buf, nil
}

// DecodeLine decodes raw, the stored line of node i read earlier.
func (s *Session) DecodeLine(i int, raw []byte) (*transcript.Node, error) {
	var n transcript.Node
	if err := n.UnmarshalJSON(raw); err != nil {
		return nil, &transcript.ParseError{File: s.NodesPath(), Line: s.LineAt(i), NodeID: s.ID(i), Msg: "changed since it was indexed: " + err.Error()}
	}
	return &n, nil
}

// Node reads and decodes the node at index i. It is safe for concurrent use.
func (s *Session) Node(i int) (*transcript.Node, error) {
	raw, err := s.RawLine(i)
	if err != nil {
		return nil, err
	}
	return s.DecodeLine(i, raw)
}

// NodeByID reads the node with the given id.
func (s *Session) NodeByID(id string) (*transcript.Node, error) {
	i, ok := s.Lookup(id)
	if !ok {
		return nil, fmt.Errorf("%s: no node %q", s.Dir, id)
	}
	return s.Node(i)
}

// Close releases the open nodes file.
func (s *Session) Close() error {
	if s.transient && s.mapping != nil {
		// Nothing handed out points into it (mapped); the index is
		// dropped with it, so a use after Close fails on an empty index
		// instead of reading unmapped memory.
		unmap(s.mapping)
		s.mapping = nil
		s.recs, s.ids, s.byID, s.poolEnds, s.poolBytes, s.names, s.nameArena = nil, nil, idTable{}, nil, nil, nil, nil
		s.basePool = 0
	}
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

// mapped returns str, which points into the snapshot's mapping when the
// session has one, as a string a caller may keep: a copy when the session
// is transient, since Close unmaps it.
func (s *Session) mapped(str string) string {
	if s.transient && s.mapping != nil {
		return strings.Clone(str)
	}
	return str
}

// EventLine is one line of events.jsonl.
type EventLine struct {
	Line int
	Raw  json.RawMessage
}

// ReadEvents streams events.jsonl to fn. A torn last line is skipped with a
// warning; a malformed line elsewhere is a *ParseError.
func (s *Session) ReadEvents(fn func(EventLine) error) ([]Warning, error) {
	path := s.EventsPath()
	f, err := openRegular(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if pe := (*transcript.ParseError)(nil); errors.As(err, &pe) {
		return nil, pe
	}
	if err != nil {
		return nil, &transcript.ParseError{File: path, Msg: err.Error(), Err: err}
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<16)
	line := 0
	var warnings []Warning
	for {
		data, err := transcript.ReadLine(r, transcript.DefaultMaxLineBytes)
		if len(data) == 0 && err == io.EOF {
			return warnings, nil
		}
		line++
		if err != nil && err != io.EOF {
			pe := &transcript.ParseError{File: path, Line: line, Msg: err.Error()}
			if !errors.Is(err, transcript.ErrLineTooLong) {
				pe.Err = err // a read error, not a bad line
			}
			return warnings, pe
		}
		complete := err == nil
		body := bytes.TrimSuffix(data, []byte("\n"))
		if pos := transcript.FirstInvalidUTF8(body); pos > 0 && complete {
			return warnings, &transcript.ParseError{File: path, Line: line, Msg: transcript.InvalidUTF8Msg(pos)}
		}
		if !json.Valid(body) || !utf8.Valid(body) || len(bytes.TrimSpace(body)) == 0 || body[0] != '{' {
			if !complete {
				warnings = append(warnings, Warning{File: path, Line: line, Msg: "torn last line ignored (an interrupted write)"})
				return warnings, nil
			}
			return warnings, &transcript.ParseError{File: path, Line: line, Msg: "expected one JSON object per line"}
		}
		if ferr := fn(EventLine{Line: line, Raw: append(json.RawMessage(nil), body...)}); ferr != nil {
			return warnings, ferr
		}
		if !complete {
			return warnings, nil
		}
	}
}
