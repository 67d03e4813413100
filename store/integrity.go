package store

import (
	"fmt"
	"path/filepath"
)

// Integrity codes (docs/VERIFY.md documents every code).
const (
	CodeDuplicateID          = "duplicate_id"
	CodeMissingPredecessor   = "missing_predecessor"
	CodeMissingCaller        = "missing_caller"
	CodeCycle                = "cycle"
	CodeCallerCycle          = "caller_cycle"
	CodeHeadUnset            = "head_unset"
	CodeHeadMissing          = "head_missing"
	CodeHeadOnSummary        = "head_on_summary"
	CodeActiveSummaryMissing = "active_summary_missing"
	CodeActiveNotSummary     = "active_summary_not_summary"
)

// IntegrityError is a structural fault of a session's graph: a duplicate
// id, a link to a missing node, a predecessor or caller cycle, HEAD or the
// active summary naming nothing. It is the one error of every integrity
// check: a reader (dag.New, verify) gets every fault, a writer
// (Tx.Append) refuses the write on the first one — new nodes would
// inherit the fault — and says so (Refused).
type IntegrityError struct {
	Code   string
	Dir    string
	File   string
	Line   int
	NodeID string
	Msg    string
	// Refused is set when a write was refused for the fault.
	Refused bool
}

func (e *IntegrityError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.NodeID != "" {
		return fmt.Sprintf("%s: node %q: %s", loc, e.NodeID, e.Msg)
	}
	return fmt.Sprintf("%s: %s", loc, e.Msg)
}

// Hint, for a refused write, says why nothing was written and names the
// command that lists every fault.
func (e *IntegrityError) Hint() string {
	if !e.Refused {
		return ""
	}
	return fmt.Sprintf("nothing written: the session's graph is broken; 'ctxfold verify %s' lists every fault", e.Dir)
}

// Faults returns every structural fault of the snapshot, in the order a
// reader reports them (dag.New, verify): duplicate ids, missing links node
// by node, predecessor cycles (each once), caller cycles, then HEAD and the
// active summary. O(n).
func (s *Session) Faults() []*IntegrityError {
	l := &faultList{s: s}
	l.collect()
	return l.out
}

// checkIntegrity returns the first fault of Faults' order, or nil. It is
// the write path's guard (Tx.Append runs it once per transaction), so
// every writer — append, import --append, compact, a library caller of
// Update — refuses a broken session alike, naming the fault a reader
// would name first.
func (s *Session) checkIntegrity() error {
	l := &faultList{s: s, first: true}
	l.collect()
	return l.refused()
}

// writeCheck is checkIntegrity in O(new) when the index snapshot vouches
// for the graph it covers: sound there, and every node after it links
// only to nodes before itself (so no link is missing and no cycle can
// close), with no duplicate anywhere. Otherwise, and to name a fault, it
// is the full check.
func (s *Session) writeCheck() error {
	if s.stats.Snapshot && s.snapSound && len(s.Duplicates) == 0 && s.deltaLinksBackward() {
		l := &faultList{s: s, first: true}
		l.metaLinks()
		return l.refused()
	}
	return s.checkIntegrity()
}

func (s *Session) deltaLinksBackward() bool {
	for i := s.snapRecs; i < len(s.recs); i++ {
		r := &s.recs[i]
		if r.pred == MissingLink || r.caller == MissingLink || int(r.pred) >= i || int(r.caller) >= i {
			return false
		}
	}
	return true
}

// faultList collects faults; with first set it stops at the first one.
type faultList struct {
	s     *Session
	first bool
	out   []*IntegrityError
}

// refused is the first fault as a refused write's error, or nil.
func (l *faultList) refused() error {
	if len(l.out) == 0 {
		return nil
	}
	l.out[0].Refused = true
	return l.out[0]
}

// add records a fault and reports whether to stop.
func (l *faultList) add(code, file string, line int, id, format string, args ...any) bool {
	l.out = append(l.out, &IntegrityError{Code: code, Dir: l.s.Dir, File: file, Line: line, NodeID: id, Msg: fmt.Sprintf(format, args...)})
	return l.first
}

func (l *faultList) collect() {
	if !l.graph() {
		l.metaLinks()
	}
}

// graph checks the links and cycles, and reports whether to stop.
func (l *faultList) graph() bool {
	if l.links() {
		return true
	}
	broken, stop := l.predCycles()
	return stop || l.callerCycles(broken)
}

// graphSound reports whether the nodes form a sound graph (HEAD and the
// active summary aside): what an index snapshot vouches for.
func (s *Session) graphSound() bool {
	l := &faultList{s: s, first: true}
	l.graph()
	return len(l.out) == 0
}

// links: a duplicate id, a predecessor or caller that names no node.
func (l *faultList) links() bool {
	s, nodes := l.s, l.s.NodesPath()
	for _, d := range s.Duplicates {
		if l.add(CodeDuplicateID, nodes, d.Line, d.ID, "duplicate id (first defined on line %d)", d.FirstLine) {
			return true
		}
	}
	for i := range s.Len() {
		if s.PredIndex(i) == MissingLink {
			r := s.Ref(i)
			if l.add(CodeMissingPredecessor, nodes, r.Line, r.ID, "predecessor %q not found", r.Predecessor) {
				return true
			}
		}
		if s.CallerIndex(i) == MissingLink {
			r := s.Ref(i)
			if l.add(CodeMissingCaller, nodes, r.Line, r.ID, "caller %q not found", r.Caller) {
				return true
			}
		}
	}
	return false
}

// predCycles reports each cycle of predecessor links once (walks from each
// node in index order; the node where a walk meets itself is named) and
// returns which nodes never reach a root: on a cycle or below a missing
// link or a cycle. A colouring walk, O(n).
func (l *faultList) predCycles() (broken []bool, stop bool) {
	s := l.s
	n := s.Len()
	const unknown, visiting, done = 0, 1, 2
	state := make([]uint8, n)
	broken = make([]bool, n)
	var stack []int
	for start := range n {
		if state[start] == done {
			continue
		}
		stack = stack[:0]
		bad := false
		for cur := start; ; {
			if state[cur] == done {
				bad = broken[cur]
				break
			}
			if state[cur] == visiting {
				r := s.Ref(cur)
				if l.add(CodeCycle, s.NodesPath(), r.Line, r.ID, "predecessor chain forms a cycle") {
					return nil, true
				}
				bad = true
				break
			}
			state[cur] = visiting
			stack = append(stack, cur)
			p := s.PredIndex(cur)
			if p == MissingLink {
				bad = true
				break
			}
			if p < 0 {
				break
			}
			cur = p
		}
		for _, k := range stack {
			state[k] = done
			broken[k] = bad
		}
	}
	return broken, false
}

// callerCycles reports a spawned subtree that hangs, through its root's
// caller, below itself: a root's caller must not lie in the tree that
// root starts, or walks that follow "predecessor, else caller" up to a
// root would never end. Only chains that reach a root are looked at
// (predCycles reported the rest). O(n).
func (l *faultList) callerCycles(broken []bool) bool {
	s := l.s
	n := s.Len()
	anchor := func(i int) int {
		if p := s.PredIndex(i); p >= 0 {
			return p
		}
		return max(s.CallerIndex(i), -1)
	}
	const unknown, visiting, done = 0, 1, 2
	state := make([]uint8, n)
	var stack []int
	for start := range n {
		if state[start] != unknown || broken[start] {
			continue
		}
		stack = stack[:0]
		for cur := start; cur >= 0 && !broken[cur]; cur = anchor(cur) {
			if state[cur] == done {
				break
			}
			if state[cur] == visiting {
				// Name the root whose caller closes the loop.
				at := cur
				for k := len(stack) - 1; k >= 0; k-- {
					if s.PredIndex(stack[k]) < 0 {
						at = stack[k]
						break
					}
				}
				r := s.Ref(at)
				if l.add(CodeCallerCycle, s.NodesPath(), r.Line, r.ID, "caller %q lies in the subtree this node starts (a caller cycle)", r.Caller) {
					return true
				}
				break
			}
			state[cur] = visiting
			stack = append(stack, cur)
		}
		for _, k := range stack {
			state[k] = done
		}
	}
	return false
}

// metaLinks: a HEAD or active summary in session.json that names no node,
// or the wrong kind of node.
func (l *faultList) metaLinks() {
	s := l.s
	nodes, meta := s.NodesPath(), filepath.Join(s.Dir, MetaFile)
	if h := s.Meta.Head; h != "" {
		if i, ok := s.Lookup(h); !ok {
			l.add(CodeHeadMissing, meta, s.MetaKeyLine("head"), h, "HEAD names a node that does not exist")
		} else if s.IsSummary(i) {
			l.add(CodeHeadOnSummary, meta, s.MetaKeyLine("head"), h, "HEAD is a summary node; HEAD never rests on a summary")
		}
	} else if n := s.Len(); n > 0 {
		l.add(CodeHeadUnset, meta, s.MetaKeyLine("head"), "", "HEAD is unset but the session has %d nodes", n)
	}
	if a := s.Meta.ActiveSummaryID; a != "" {
		if i, ok := s.Lookup(a); !ok {
			l.add(CodeActiveSummaryMissing, meta, s.MetaKeyLine("active_summary_id"), a, "the active summary does not exist")
		} else if !s.IsSummary(i) {
			l.add(CodeActiveNotSummary, nodes, s.Ref(i).Line, a, "the active summary is not a summary node (metadata.compaction is not true)")
		}
	}
}
