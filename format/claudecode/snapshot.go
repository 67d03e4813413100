package claudecode

// The planner state a resume point saves (resume.go), column by column:
// gob encodes a slice of numbers or strings in one go, where a slice of
// structs or a map costs a reflective step per element, and the state is
// loaded at every refresh.

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	"github.com/ctxfold/ctxfold/transcript"
)

type snap struct {
	// The planned nodes.
	ID                       []string
	Kind                     []uint8
	Side                     []bool
	Pred, Caller, Group, Tal []int32
	First                    refCols
	// More lines merged into a node: MoreOf names the node of each.
	MoreOf []int32
	More   refCols
	// Calls and results: a count per node, the ids one after the other.
	CallsN, ResultsN []int32
	CallIDs, Results []string
	// Summaries: the node of each and its summaryInfo.
	SumOf, SumLast, SumCont []int32
	SumFirst, SumCount      []int32
	SumText                 refCols
	// The uuid index, as parallel keys and values.
	UUIDKeys []key
	UUIDVals []int32
	SkipKeys []key
	SkipVals []key
	IDKeys   []key
	MsgKeys  []key
	MsgVals  []int32
	Rest     snapRest
	// callAt and resAt are where each node's calls and results start in
	// CallIDs and Results (decodeSnap).
	callAt, resAt []int32
}

// snapRest is the part of the state that stays small (or grows by the
// turn, not by the line); it is encoded with gob.
type snapRest struct {
	Key        hashKey
	Off        int64
	Line       int
	Lines      int
	ToolNode   map[string]int32
	Prompts    map[string]string
	PromptUsed map[string]bool
	AgentTool  map[string]string
	AgentSeen  map[string]bool
	Boundaries map[string]int32
	LastBound  int32
	LastTask   string
	Head       int32
	Model      string
	Sys        int32
	FileSys    int32
	Grp        []int32
	GrpBase    int32
	GrpBroken  bool
	Moved      map[int32]int32
	BlobHash   []string
	BlobRole   []string
	Blob       refCols
	SentN      []int32
	SentNodes  []int32
	SentBlob   refCols
	SideModel  string
	FileCaller int32
	WarnedLink bool
	LastAsst   int32
}

// refCols are line references of the session file (the only file of a
// resumable conversation, so no file index).
type refCols struct {
	Line []int32
	Off  []int64
	N    []int32
}

func (c *refCols) add(r lineRef) {
	c.Line = append(c.Line, r.line)
	c.Off = append(c.Off, r.off)
	c.N = append(c.N, r.n)
}

func (c *refCols) at(i int) lineRef { return lineRef{line: c.Line[i], off: c.Off[i], n: c.N[i]} }

func (c *refCols) each(yield func(lineRef)) {
	for i := range c.Line {
		yield(c.at(i))
	}
}

// orEmpty is s, or an empty snap when s is nil.
func (s *snap) orEmpty() *snap {
	if s == nil {
		return &snap{}
	}
	return s
}

func (c *refCols) ok(n int) bool { return len(c.Line) == n && len(c.Off) == n && len(c.N) == n }

// save records the planner's state at the start of line line+1, byte off,
// as the Point.
func (r *resumer) save(p *planner, off int64, line int) error {
	rs := &snapRest{Key: p.hkey, Off: off, Line: line, Lines: p.lines,
		ToolNode: p.toolNode, Prompts: p.prompts, PromptUsed: p.promptUsed, AgentTool: p.agentTool, AgentSeen: p.agentSeen,
		Boundaries: p.boundaries, LastBound: p.lastBound, LastTask: p.lastTask, Head: p.head, Model: p.model,
		Sys: p.sys, FileSys: p.fileSys, Grp: p.grp, GrpBase: p.grpBase, GrpBroken: p.grpBroken, Moved: p.moved,
		SideModel: p.sideModel, FileCaller: p.fileCaller, WarnedLink: p.warnedLink, LastAsst: p.lastAsst}
	for h, b := range p.blobs {
		rs.BlobHash, rs.BlobRole = append(rs.BlobHash, h), append(rs.BlobRole, b.role)
		rs.Blob.add(b.ref)
	}
	for _, g := range p.sent {
		rs.SentN = append(rs.SentN, int32(len(g.nodes)))
		rs.SentNodes = append(rs.SentNodes, g.nodes...)
		rs.SentBlob.add(g.blob)
	}
	state, err := encodePlanner(p, rs)
	if err != nil {
		return fmt.Errorf("claude code: saving the resume point: %w", err)
	}
	r.point = &Point{State: state, Offset: off, Nodes: len(p.nodes)}
	return nil
}

// decodeSnap reads a saved state and checks that its columns agree.
func decodeSnap(state []byte) (*snap, error) {
	var s snap
	if err := s.decode(state); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCannotResume, err)
	}
	rs := &s.Rest
	n := len(s.ID)
	ok := len(s.Kind) == n && len(s.Side) == n && len(s.Pred) == n && len(s.Caller) == n && len(s.Group) == n &&
		len(s.Tal) == n && s.First.ok(n) && len(s.CallsN) == n && len(s.ResultsN) == n &&
		s.More.ok(len(s.MoreOf)) && len(s.SumLast) == len(s.SumOf) && len(s.SumCont) == len(s.SumOf) && s.SumText.ok(len(s.SumOf)) &&
		len(s.SumFirst) == len(s.SumOf) && len(s.SumCount) == len(s.SumOf) && !slices.ContainsFunc(s.SumCount, func(c int32) bool { return c < 0 }) &&
		len(s.UUIDVals) == len(s.UUIDKeys) && len(s.SkipVals) == len(s.SkipKeys) && len(s.MsgVals) == len(s.MsgKeys) &&
		len(rs.BlobRole) == len(rs.BlobHash) && rs.Blob.ok(len(rs.BlobHash)) && rs.SentBlob.ok(len(rs.SentN))
	if !ok {
		// The columns below are indexed by node: their lengths first.
		return nil, fmt.Errorf("%w: the saved state is inconsistent", ErrCannotResume)
	}
	var calls, results, sent int
	s.callAt, s.resAt = make([]int32, n), make([]int32, n)
	for i := range n {
		s.callAt[i], s.resAt[i] = int32(calls), int32(results)
		calls, results = calls+int(s.CallsN[i]), results+int(s.ResultsN[i])
	}
	for _, k := range rs.SentN {
		sent += int(k)
	}
	for _, i := range append(append([]int32(nil), s.MoreOf...), s.SumOf...) {
		ok = ok && i >= 0 && int(i) < n
	}
	// Every node index names a node, or none: a damaged state is refused
	// here, never indexed out of range later.
	for _, col := range [][]int32{s.Pred, s.Caller, s.Group, s.Tal, s.SumLast, s.SumCont, s.SumFirst, s.UUIDVals, s.MsgVals,
		{rs.LastBound, rs.Head, rs.Sys, rs.FileSys, rs.FileCaller, rs.LastAsst}} {
		ok = ok && inRange(col, n)
	}
	// An open group's members, the groups sent and a moved group's last
	// node are nodes, never none (found by FuzzResumeState: a member of
	// none was indexed when the group closed).
	ok = ok && nodesOnly(rs.Grp, n) && nodesOnly(rs.SentNodes, n)
	// The group's base means something only while a group is open.
	ok = ok && (len(rs.Grp) == 0 || inRange([]int32{rs.GrpBase}, n))
	for k, v := range rs.Moved {
		ok = ok && nodesOnly([]int32{k}, n) && inRange([]int32{v}, n)
	}
	for _, v := range rs.ToolNode {
		ok = ok && inRange([]int32{v}, n)
	}
	// A compact_boundary names its summary node: the planner gives it its
	// text (planCompactSummary), so a bound that is no summary is a
	// damaged state (found by FuzzResumeState).
	isSummary := func(i int32) bool {
		_, found := slices.BinarySearch(s.SumOf, i)
		return found
	}
	ok = ok && (rs.LastBound == none || isSummary(rs.LastBound))
	for _, v := range rs.Boundaries {
		ok = ok && inRange([]int32{v}, n) && isSummary(v)
	}
	// The tables are searched by halving (keytable.go), and so are the
	// merged lines and the summaries of a node (pnodeAt).
	ok = ok && slices.IsSorted(s.MoreOf) && ascending(s.SumOf)
	ok = ok && ascending(s.UUIDKeys) && ascending(s.SkipKeys) && ascending(s.IDKeys) && ascending(s.MsgKeys)
	if !ok || calls != len(s.CallIDs) || results != len(s.Results) || sent != len(rs.SentNodes) || !snapSound(&s) {
		return nil, fmt.Errorf("%w: the saved state is inconsistent", ErrCannotResume)
	}
	return &s, nil
}

// restore gives a fresh planner the saved state: its id tables over the
// state's columns, copies of the small tables, and its nodes as they are
// asked for (node). It touches nothing startFile sets, so it may run
// before startFile and beside another planner's work (runRefresh): the
// planners share the state's columns and write none of them.
func (p *planner) restore(s *snap) {
	rs := &s.Rest
	p.base = s
	p.hkey = rs.Key
	p.uuidNode, p.skipParent = frozenTable(s.UUIDKeys, s.UUIDVals), frozenTable(s.SkipKeys, s.SkipVals)
	p.ids = frozenTable(s.IDKeys, make([]struct{}, len(s.IDKeys)))
	p.msgs = frozenTable(s.MsgKeys, s.MsgVals)
	p.toolNode, p.prompts, p.promptUsed = cloneOr(rs.ToolNode), cloneOr(rs.Prompts), cloneOr(rs.PromptUsed)
	p.agentTool, p.agentSeen, p.boundaries = cloneOr(rs.AgentTool), maps.Clone(rs.AgentSeen), cloneOr(rs.Boundaries)
	p.lastBound, p.lastTask, p.head, p.model = rs.LastBound, rs.LastTask, rs.Head, rs.Model
	p.sys, p.grpBase, p.grpBroken = rs.Sys, rs.GrpBase, rs.GrpBroken
	p.grp, p.moved = append([]int32(nil), rs.Grp...), maps.Clone(rs.Moved)
	p.sideModel, p.lastAsst = rs.SideModel, rs.LastAsst
	// The nodes are restored as they are asked for (node).
	p.nodes = make([]*pnode, len(s.ID))
	for k, h := range rs.BlobHash {
		if p.blobs == nil {
			p.blobs = map[string]blobRef{}
		}
		p.blobs[h] = blobRef{rs.Blob.at(k), rs.BlobRole[k]}
	}
	at := 0
	for k, m := range rs.SentN {
		p.sent = append(p.sent, sentGroup{rs.SentNodes[at : at+int(m) : at+int(m)], rs.SentBlob.at(k)})
		at += int(m)
	}
}

// restoreFile is the rest of load, after startFile opened f: the state's
// place in the file.
func (p *planner) restoreFile(s *snap, f *os.File, path string) (*lineReader, error) {
	rs := &s.Rest
	p.lines, p.fileSys, p.fileCaller, p.warnedLink = rs.Lines, rs.FileSys, rs.FileCaller, rs.WarnedLink
	if _, err := f.Seek(rs.Off, io.SeekStart); err != nil {
		return nil, &transcript.ParseError{File: path, Msg: err.Error()}
	}
	lr := newLineReader(p.limited(f, rs.Off), path, p.opts.max())
	lr.off, lr.line = rs.Off, rs.Line
	return lr, nil
}

// nodesOnly: every value is a node index below n (not none).
func nodesOnly(vals []int32, n int) bool {
	for _, v := range vals {
		if v < 0 || int(v) >= n {
			return false
		}
	}
	return true
}

// inRange: every value is a node index below n, or none (-1).
func inRange(vals []int32, n int) bool {
	for _, v := range vals {
		if v < none || int(v) >= n {
			return false
		}
	}
	return true
}

func cloneOr[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return maps.Clone(m)
}

// node is planned node i; one of the state the planner was restored
// from is made from its columns the first time it is asked for (a
// refresh after one turn reads a few of the session's nodes, not all).
// Only the planning goroutine calls it; emit's builders peek.
func (p *planner) node(i int32) *pnode {
	if nd := p.nodes[i]; nd != nil {
		return nd
	}
	nd := p.base.pnodeAt(int(i))
	p.nodes[i] = nd
	return nd
}

// peek is node i without keeping a node it makes: it writes nothing, so
// emit's builders call it on several goroutines.
func (p *planner) peek(i int32) *pnode {
	if nd := p.nodes[i]; nd != nil {
		return nd
	}
	return p.base.pnodeAt(int(i))
}

// restoreAll makes every node not made yet (an encoding of the whole
// planner reads them all).
func (p *planner) restoreAll() {
	for i := range int32(len(p.nodes)) {
		p.node(i)
	}
}

// pnodeAt is node i of the saved state.
func (s *snap) pnodeAt(i int) *pnode {
	nd := &pnode{id: s.ID[i], kind: s.Kind[i], sidechain: s.Side[i], pred: s.Pred[i], caller: s.Caller[i],
		group: s.Group[i], tail: s.Tal[i], first: s.First.at(i)}
	// Full slice expressions: an append to one node's calls must not
	// write over the next node's.
	if k := s.CallsN[i]; k > 0 {
		c := s.callAt[i]
		nd.calls = s.CallIDs[c : c+k : c+k]
	}
	if k := s.ResultsN[i]; k > 0 {
		r := s.resAt[i]
		nd.results = s.Results[r : r+k : r+k]
	}
	// MoreOf and SumOf are in node order (decodeSnap checks it).
	at, _ := slices.BinarySearch(s.MoreOf, int32(i))
	for k := at; k < len(s.MoreOf) && s.MoreOf[k] == int32(i); k++ {
		if nd.more == nil {
			nd.more = new([]lineRef)
		}
		*nd.more = append(*nd.more, s.More.at(k))
	}
	if k, ok := slices.BinarySearch(s.SumOf, int32(i)); ok {
		nd.sum = &summaryInfo{last: s.SumLast[k], cont: s.SumCont[k], first: s.SumFirst[k], count: int(s.SumCount[k]), text: s.SumText.at(k)}
	}
	return nd
}
