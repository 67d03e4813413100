package store

import (
	"encoding/binary"
	"fmt"
	"iter"
	"sort"
	"unsafe"

	"github.com/ctxfold/ctxfold/transcript"
)

// The in-memory index keeps a node in a 40-byte, pointer-free record plus
// its id in one arena: links resolved to indexes once (instead of a copy
// of every predecessor id), the rare fields in side tables, and tool-call
// and result ids in one shared pool. NodeRef is the friendly view of a
// record, built on demand by Ref; nothing is allocated to build it.

// Link values of PredIndex and CallerIndex besides a node index.
const (
	// NoLink: the node has no predecessor (a root) or no caller.
	NoLink = -1
	// MissingLink: the node names a predecessor or caller that is not in
	// the session; Ref(i).Predecessor / .Caller still give the name.
	MissingLink = -2
)

// refRec is one node's index entry, 40 bytes and no pointers (the garbage
// collector never scans the records). Keep it small: it is the per-node
// cost of every command. Its id is in Session.ids; its line number is not
// stored: it is its index plus the duplicate lines before it (LineAt).
type refRec struct {
	offset int64
	idOff  uint32
	idLen  uint32
	length int32
	pred   int32
	caller int32
	// pool is where this node's ids start in Session.pool: its tool-call
	// ids, then its tool-result ids. A count of manyIDs means the counts
	// are in Session.bigCounts.
	pool     int32
	nCalls   uint16
	nResults uint16
	role     uint8
	flags    uint8
}

const manyIDs = 1<<16 - 1

const (
	flagSummary uint8 = 1 << iota
	flagHasText
	flagNamed
)

const (
	roleSystem uint8 = iota
	roleUser
	roleAssistant
	roleTool
)

// roleCode is the record's code for a role; decoding admits no other.
func roleCode(r transcript.Role) (uint8, bool) {
	switch r {
	case transcript.RoleSystem:
		return roleSystem, true
	case transcript.RoleUser:
		return roleUser, true
	case transcript.RoleAssistant:
		return roleAssistant, true
	case transcript.RoleTool:
		return roleTool, true
	}
	return 0, false
}

var roleNames = [...]transcript.Role{roleSystem: transcript.RoleSystem, roleUser: transcript.RoleUser, roleAssistant: transcript.RoleAssistant, roleTool: transcript.RoleTool}

// nameRec is where node's name lies in Session.nameArena. Session.names
// holds one per named node in node order (nodes are only ever added at
// the end), so a name is found by binary search and the table has no
// pointers: the snapshot maps it as it is.
type nameRec struct {
	node int32
	off  uint32
	n    uint32
}

func (s *Session) nameOf(i int32) string {
	k := sort.Search(len(s.names), func(k int) bool { return s.names[k].node >= i })
	if k == len(s.names) || s.names[k].node != i {
		return ""
	}
	r := s.names[k]
	// Like ids, the arena's bytes are never written again once appended.
	return s.mapped(unsafe.String(&s.nameArena[r.off], int(r.n)))
}

// addName records node i's name. Names repeat (a tool's name on each of
// its results): one equal to the name before shares its bytes.
func (s *Session) addName(i int32, name string) {
	if k := len(s.names) - 1; k >= 0 && s.nameOf(s.names[k].node) == name {
		s.names = append(s.names, nameRec{node: i, off: s.names[k].off, n: s.names[k].n})
		return
	}
	s.names = append(s.names, nameRec{node: i, off: uint32(len(s.nameArena)), n: uint32(len(name))})
	s.nameArena = append(s.nameArena, name...)
}

// danglingLinks are the names of links that did not resolve.
type danglingLinks struct {
	pred, caller string
}

// pendingLink is a link to an id not indexed yet (a line naming a later
// line, possible only in a hand-written file); resolved when indexing ends.
type pendingLink struct {
	node   int32
	caller bool
	id     string
}

// Len is the number of distinct nodes.
func (s *Session) Len() int { return len(s.recs) }

// Ref is the index entry of the node at index i.
func (s *Session) Ref(i int) NodeRef {
	r := &s.recs[i]
	ref := NodeRef{
		ID:      s.ID(i),
		Role:    s.RoleAt(i),
		Summary: r.flags&flagSummary != 0,
		HasText: r.flags&flagHasText != 0,
		Line:    s.LineAt(i),
		Offset:  r.offset,
		Length:  int(r.length),
	}
	ref.Predecessor = s.linkName(i, r.pred, false)
	ref.Caller = s.linkName(i, r.caller, true)
	if r.flags&flagNamed != 0 {
		ref.Name = s.nameOf(int32(i))
	}
	at := int(r.pool)
	take := func(n int) []string {
		if n == 0 {
			return nil
		}
		ids := s.poolIDs(at, n)
		at += n
		return ids
	}
	calls, results := int(r.nCalls), int(r.nResults)
	if calls == manyIDs || results == manyIDs {
		big := s.bigCounts[int32(i)]
		calls, results = int(big[0]), int(big[1])
	}
	ref.ToolCallIDs = take(calls)
	ref.ResultIDs = take(results)
	if ref.Summary {
		ref.CoversIDs = s.covers[int32(i)]
		ref.CoversSpan = s.spans[int32(i)]
	}
	return ref
}

// poolLen is the number of tool ids in the pool: the snapshot's, then
// those of the nodes indexed after it.
func (s *Session) poolLen() int { return s.basePool + len(s.pool) }

// poolIDs returns the n tool ids from pool position at. Those of nodes
// after the snapshot (or of a session without one) are a slice of
// s.pool; the snapshot's are built from its mapped table, so an open
// never builds a string per tool id of the whole session.
func (s *Session) poolIDs(at, n int) []string {
	if at >= s.basePool {
		at -= s.basePool
		return s.pool[at : at+n : at+n]
	}
	ids := make([]string, n)
	for k := range ids {
		ids[k] = s.basePoolID(at + k)
	}
	return ids
}

// basePoolID is tool id p of the snapshot's pool.
func (s *Session) basePoolID(p int) string {
	end := binary.LittleEndian.Uint32(s.poolEnds[4*p:])
	start := uint32(0)
	if p > 0 {
		start = binary.LittleEndian.Uint32(s.poolEnds[4*p-4:])
	}
	if end == start {
		return ""
	}
	return s.mapped(unsafe.String(&s.poolBytes[start], int(end-start)))
}

func (s *Session) linkName(i int, link int32, caller bool) string {
	switch {
	case link >= 0:
		return s.ID(int(link))
	case link == MissingLink:
		d := s.dangling[int32(i)]
		if caller {
			return d.caller
		}
		return d.pred
	}
	return ""
}

// All yields every node's index and entry in file order.
func (s *Session) All() iter.Seq2[int, NodeRef] {
	return func(yield func(int, NodeRef) bool) {
		for i := range s.recs {
			if !yield(i, s.Ref(i)) {
				return
			}
		}
	}
}

// ID is the id of the node at index i.
func (s *Session) ID(i int) string {
	r := &s.recs[i]
	// The arena's bytes are never written again once appended, and a
	// string keeps the array it points into alive when append moves on.
	return s.mapped(unsafe.String(&s.ids[r.idOff], int(r.idLen)))
}

// IsSummary reports whether the node at index i is a summary node.
func (s *Session) IsSummary(i int) bool { return s.recs[i].flags&flagSummary != 0 }

// RoleAt is the role of the node at index i.
func (s *Session) RoleAt(i int) transcript.Role { return roleNames[s.recs[i].role] }

// LineAt is the line of nodes.jsonl holding the node at index i.
func (s *Session) LineAt(i int) int {
	// Duplicates are in file order, and dups[k].Line − k never decreases:
	// the first k with dups[k].Line − k > i+1 is how many lines before
	// node i's are duplicates.
	d := s.Duplicates
	k := sort.Search(len(d), func(k int) bool { return d[k].Line-k > i+1 })
	return i + 1 + k
}

// PredIndex is the index of the predecessor of node i, NoLink for a root,
// or MissingLink when the predecessor is not in the session.
func (s *Session) PredIndex(i int) int { return int(s.recs[i].pred) }

// CallerIndex is the index of the caller of node i, NoLink when it has
// none, or MissingLink when the caller is not in the session.
func (s *Session) CallerIndex(i int) int { return int(s.recs[i].caller) }

// Lookup returns the index of the node with the given id.
func (s *Session) Lookup(id string) (int, bool) {
	i, ok := s.byID.find(s, id)
	return int(i), ok
}

// RefByID returns the index entry of the node with the given id.
func (s *Session) RefByID(id string) (NodeRef, bool) {
	i, ok := s.byID.find(s, id)
	if !ok {
		return NodeRef{}, false
	}
	return s.Ref(int(i)), true
}

// addRef adds a parsed line to the index, or records it as a duplicate.
// Links to ids not indexed yet wait in s.pending for resolveLinks.
func (s *Session) addRef(ref NodeRef) *transcript.ParseError {
	if first, dup := s.byID.find(s, ref.ID); dup {
		s.Duplicates = append(s.Duplicates, Duplicate{ID: ref.ID, FirstLine: s.LineAt(int(first)), Line: ref.Line})
		return nil
	}
	role, ok := roleCode(ref.Role)
	if !ok {
		return &transcript.ParseError{File: s.NodesPath(), Line: ref.Line, NodeID: ref.ID, Msg: fmt.Sprintf("\"role\" must be system, user, assistant or tool, got %q", ref.Role)}
	}
	const max32 = 1<<31 - 1
	ids := len(ref.ToolCallIDs) + len(ref.ResultIDs)
	if len(s.recs) >= max32 || ref.Length >= max32 || s.poolLen() >= max32-ids || len(s.ids)+len(ref.ID) > 1<<32-1 {
		return &transcript.ParseError{File: s.NodesPath(), Line: ref.Line, NodeID: ref.ID,
			Msg: "the session is past the index's limits (2³¹ nodes or tool ids, 4 GiB of ids, 2 GiB a line); split it"}
	}
	i := int32(len(s.recs))
	r := refRec{
		idOff:  uint32(len(s.ids)),
		idLen:  uint32(len(ref.ID)),
		offset: ref.Offset,
		length: int32(ref.Length),
		pred:   NoLink,
		caller: NoLink,
		pool:   int32(s.poolLen()),
		role:   role,
	}
	if c, res := len(ref.ToolCallIDs), len(ref.ResultIDs); c >= manyIDs || res >= manyIDs {
		r.nCalls, r.nResults = manyIDs, manyIDs
		if s.bigCounts == nil {
			s.bigCounts = map[int32][2]int32{}
		}
		s.bigCounts[i] = [2]int32{int32(c), int32(res)}
	} else {
		r.nCalls, r.nResults = uint16(c), uint16(res)
	}
	if ref.Summary {
		r.flags |= flagSummary
		if len(ref.CoversIDs) > 0 {
			if s.covers == nil {
				s.covers = map[int32][]string{}
			}
			s.covers[i] = ref.CoversIDs
		}
		if ref.CoversSpan.Valid() {
			if s.spans == nil {
				s.spans = map[int32]transcript.CoverSpan{}
			}
			s.spans[i] = ref.CoversSpan
		}
	}
	if ref.HasText {
		r.flags |= flagHasText
	}
	if ref.Name != "" {
		r.flags |= flagNamed
		s.addName(i, ref.Name)
	}
	s.pool = append(s.pool, ref.ToolCallIDs...)
	s.pool = append(s.pool, ref.ResultIDs...)
	r.pred = s.link(i, ref.Predecessor, false)
	r.caller = s.link(i, ref.Caller, true)
	s.ids = append(s.ids, ref.ID...)
	s.recs = append(s.recs, r)
	s.byID.insert(s, i)
	return nil
}

func (s *Session) link(node int32, id string, caller bool) int32 {
	if id == "" {
		return NoLink
	}
	if j, ok := s.byID.find(s, id); ok {
		return j
	}
	s.pending = append(s.pending, pendingLink{node: node, caller: caller, id: id})
	return MissingLink
}

// resolveLinks settles the links that named ids not indexed at the time:
// found now, or dangling for good (verify reports them).
func (s *Session) resolveLinks() {
	// A node appended to this snapshot may be the one a dangling link
	// names (a hand-written file that named it before it existed).
	for node, d := range s.dangling {
		for _, p := range []pendingLink{{node: node, id: d.pred}, {node: node, caller: true, id: d.caller}} {
			if p.id != "" {
				s.pending = append(s.pending, p)
			}
		}
		delete(s.dangling, node)
	}
	for _, p := range s.pending {
		j, ok := s.byID.find(s, p.id)
		if !ok {
			if s.dangling == nil {
				s.dangling = map[int32]danglingLinks{}
			}
			d := s.dangling[p.node]
			if p.caller {
				d.caller = p.id
			} else {
				d.pred = p.id
			}
			s.dangling[p.node] = d
			continue
		}
		if p.caller {
			s.recs[p.node].caller = j
		} else {
			s.recs[p.node].pred = j
		}
	}
	s.pending = nil
}

// ToolFacts returns the indexed node's tool facts (no allocation: the id
// lists are the ref's own).
func (r NodeRef) ToolFacts() transcript.ToolFacts {
	return transcript.ToolFacts{Role: r.Role, Calls: r.ToolCallIDs, Results: r.ResultIDs}
}
