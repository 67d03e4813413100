package transcript

import (
	"fmt"
	"path/filepath"
)

// BrokenSessionError refuses a write to a session whose graph is broken: a
// duplicate id, a link to a missing node, a predecessor or caller cycle,
// HEAD or the active summary naming nothing. New nodes would inherit the
// fault, so nothing is written. It names the first fault; 'ctxfold verify'
// lists every one (dag.New is the reader's full check, with codes).
type BrokenSessionError struct {
	Dir    string
	File   string
	Line   int
	NodeID string
	Msg    string
}

func (e *BrokenSessionError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.NodeID != "" {
		return fmt.Sprintf("%s: node %q: %s", loc, e.NodeID, e.Msg)
	}
	return fmt.Sprintf("%s: %s", loc, e.Msg)
}

// Hint says why nothing was written and names the command that lists
// every fault.
func (e *BrokenSessionError) Hint() string {
	return fmt.Sprintf("nothing written: the session's graph is broken; 'ctxfold verify %s' lists every fault", e.Dir)
}

// checkIntegrity returns the first structural fault of the snapshot, or
// nil. It is the write path's guard (Tx.Append runs it once per
// transaction), so every writer — append, import --append, compact, a
// library caller of Update — refuses a broken session alike.
func (s *Session) checkIntegrity() error {
	if err := s.checkLinks(); err != nil {
		return err
	}
	if err := s.checkCycles(); err != nil {
		return err
	}
	return s.checkMetaLinks()
}

// writeCheck is checkIntegrity in O(new) when the index snapshot vouches
// for the graph it covers: sound there, and every node after it links
// only to nodes before itself (so no link is missing and no cycle can
// close), with no duplicate anywhere. Otherwise, and to name a fault, it
// is the full check.
func (s *Session) writeCheck() error {
	if s.stats.Snapshot && s.snapSound && len(s.Duplicates) == 0 && s.deltaLinksBackward() {
		return s.checkMetaLinks()
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

// brokenSession is the error of every integrity fault: the file and line
// to look at, and the node concerned.
func (s *Session) brokenSession(file string, line int, id, format string, args ...any) error {
	return &BrokenSessionError{Dir: s.Dir, File: file, Line: line, NodeID: id, Msg: fmt.Sprintf(format, args...)}
}

// checkLinks refuses a duplicate id and a predecessor or caller that names
// no node.
func (s *Session) checkLinks() error {
	nodes := s.NodesPath()
	if len(s.Duplicates) > 0 {
		d := s.Duplicates[0]
		return s.brokenSession(nodes, d.Line, d.ID, "duplicate id (first defined on line %d)", d.FirstLine)
	}
	for i := range s.Len() {
		if s.PredIndex(i) == MissingLink {
			r := s.Ref(i)
			return s.brokenSession(nodes, r.Line, r.ID, "predecessor %q not found", r.Predecessor)
		}
		if s.CallerIndex(i) == MissingLink {
			r := s.Ref(i)
			return s.brokenSession(nodes, r.Line, r.ID, "caller %q not found", r.Caller)
		}
	}
	return nil
}

// checkCycles refuses a cycle of predecessor or caller links, which would
// make every walk up the graph loop.
func (s *Session) checkCycles() error {
	nodes := s.NodesPath()
	n := s.Len()
	// Predecessor cycles first, then caller cycles (dag.New's order and
	// wording, so append and render name the same fault). A node's anchor
	// for the second walk is its predecessor, or for a root its caller: a
	// cycle of anchors through a caller link is a root spawned from inside
	// its own subtree. Colouring walks, O(n) each.
	const unknown, visiting, done = 0, 1, 2
	state := make([]uint8, n)
	var stack []int
	walk := func(next func(int) int, report func(cur int, stack []int) error) error {
		clear(state)
		for start := range n {
			stack = stack[:0]
			for cur := start; cur >= 0 && state[cur] != done; cur = next(cur) {
				if state[cur] == visiting {
					return report(cur, stack)
				}
				state[cur] = visiting
				stack = append(stack, cur)
			}
			for _, k := range stack {
				state[k] = done
			}
		}
		return nil
	}
	pred := func(i int) int { return max(s.PredIndex(i), -1) }
	if err := walk(pred, func(cur int, _ []int) error {
		r := s.Ref(cur)
		return s.brokenSession(nodes, r.Line, r.ID, "predecessor chain forms a cycle")
	}); err != nil {
		return err
	}
	anchor := func(i int) int {
		if p := s.PredIndex(i); p >= 0 {
			return p
		}
		return max(s.CallerIndex(i), -1)
	}
	if err := walk(anchor, func(cur int, stack []int) error {
		at := cur
		for k := len(stack) - 1; k >= 0; k-- {
			if s.PredIndex(stack[k]) < 0 {
				at = stack[k]
				break
			}
		}
		r := s.Ref(at)
		return s.brokenSession(nodes, r.Line, r.ID, "caller %q lies in the subtree this node starts (a caller cycle)", r.Caller)
	}); err != nil {
		return err
	}
	return nil
}

// checkMetaLinks refuses a HEAD or active summary in session.json that
// names no node, or the wrong kind of node.
func (s *Session) checkMetaLinks() error {
	nodes, meta := s.NodesPath(), filepath.Join(s.Dir, MetaFile)
	n := s.Len()
	if h := s.Meta.Head; h != "" {
		if i, ok := s.Lookup(h); !ok {
			return s.brokenSession(meta, s.MetaKeyLine("head"), h, "HEAD names a node that does not exist")
		} else if s.IsSummary(i) {
			return s.brokenSession(meta, s.MetaKeyLine("head"), h, "HEAD is a summary node; HEAD never rests on a summary")
		}
	} else if n > 0 {
		return s.brokenSession(meta, s.MetaKeyLine("head"), "", "HEAD is unset but the session has %d nodes", n)
	}
	if a := s.Meta.ActiveSummaryID; a != "" {
		if i, ok := s.Lookup(a); !ok {
			return s.brokenSession(meta, s.MetaKeyLine("active_summary_id"), a, "the active summary does not exist")
		} else if !s.IsSummary(i) {
			return s.brokenSession(nodes, s.LineAt(i), a, "the active summary is not a summary node (metadata.compaction is not true)")
		}
	}
	return nil
}
