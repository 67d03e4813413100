package claudecode

// A resumable import (live keeps a cache session of a file
// Claude Code is still writing, docs/LIVE.md). The planner is a
// whole-file planner: a later line can merge into an earlier node (a
// streamed request), answer its calls, reorder its turn (closeGroup) or
// give it the text the client sent. A resume point B is a line start of
// the session file such that no line from B on changes a node planned
// before B; the planner's state at B is saved, and the next import of the
// grown file restores it, plans only the lines from B on and emits only
// the nodes planned from B on. The nodes planned before B are exactly the
// first ones emitted (emitOrder), and the sink is asked to commit right
// after them (a checkpoint), so the caller can cut its session back to
// that commit and append the rest.
//
// Which line starts qualify is known only once the whole file is planned:
// every line start is a candidate, and a change to node i drops every
// candidate planned after node i was (touch); of those standing, the last
// before the nodes the next lines are likely to change is taken (settle).
// So the part of the file before the new point is planned twice: once to
// find the point, once more to save the state there. A first import plans
// the whole file, then again from the latest provisional point it saved
// near the end that still stands (4 MiB, 1 MiB, 256 KiB and 64 KiB before
// it: provWindow); a refresh from a saved point plans the tail once and
// emits, while a second planner plans from the old point to the new one
// beside it (runRefresh).

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// Resume, Point, ErrCannotResume and Checkpointer are the importers'
// shared resume types (input/resume.go).
type (
	Resume       = input.Resume
	Point        = input.Point
	Checkpointer = input.Checkpointer
)

// ErrCannotResume: the saved state does not apply to the file as it is
// now (a line after the resume point changes a node planned before it, a
// sub-agent file appeared, or the state is unreadable).
var ErrCannotResume = input.ErrCannotResume

// resumer is a planner's resume bookkeeping.
type resumer struct {
	// cands are the candidate points still standing, in file order.
	cands []cand
	// base is the point the planning started from; lost when a later line
	// changed a node planned before it.
	base cand
	lost bool
	// saveAt is the offset whose state is to be saved (-1: none).
	saveAt int64
	point  *Point
	// openGroup is the turn group still open at the end of the file.
	openGroup []int32
	// provAts are where the pass that finds the point saves provisional
	// ones (ascending; none when empty), so the second pass need not plan
	// the whole file again; provs are those points, provLost[j] true once
	// a later line changes a node planned before provs[j], and provNext
	// the next of provAts to save at.
	provAts  []int64
	provs    []*Point
	provLost []bool
	provNext int
	// parsed is how many bytes of the file were planned.
	parsed int64
}

type cand struct {
	off   int64
	nodes int
}

func (r *resumer) candidate(off int64, nodes int) {
	if n := len(r.cands); n > 0 && r.cands[n-1].nodes == nodes {
		// No node between the two: the later one is as good and is kept.
		r.cands[n-1].off = off
		return
	}
	r.cands = append(r.cands, cand{off, nodes})
}

// touch notes that the current line changes node i: no point planned
// after node i stands.
func (p *planner) touch(i int32) {
	r := p.res
	if r == nil || i < 0 || p.agentFile {
		return
	}
	for n := len(r.cands); n > 0 && r.cands[n-1].nodes > int(i); n-- {
		r.cands = r.cands[:n-1]
	}
	if int(i) < r.base.nodes {
		r.lost = true
	}
	for j, pt := range r.provs {
		if int(i) < pt.Nodes {
			r.provLost[j] = true
		}
	}
}

// settle returns the point to save the state at: the last candidate
// standing that precedes the nodes the next lines are likely to change —
// the last assistant message (it may still be streaming, its calls
// await results), the turn still open (closing it reorders it) and a
// summary still waiting for its text. A point after them would be lost at
// the next refresh (touch), which then imports the whole file again.
func (p *planner) settle() cand {
	r := p.res
	risk := int32(len(p.nodes))
	lower := func(i int32) {
		if i >= 0 && i < risk {
			risk = i
		}
	}
	lower(p.lastAsst)
	for _, i := range r.openGroup {
		lower(i)
	}
	// A bound whose summary is still waiting for its text (a bound the
	// input made of a node without one: nothing to wait for).
	if p.lastBound >= 0 {
		if b := p.node(p.lastBound); b != nil && b.sum != nil && b.sum.text.line == 0 {
			lower(p.lastBound)
		}
	}
	for n := len(r.cands); n > 0 && r.cands[n-1].nodes > int(risk); n-- {
		r.cands = r.cands[:n-1]
	}
	if len(r.cands) == 0 {
		// Everything at risk was planned before the point the import
		// started from, which still stands.
		return r.base
	}
	return r.cands[len(r.cands)-1]
}

// runResumable imports conversation c for Import with opts.Resume. From
// the start of the file (no saved state) it plans the file to find the
// last point that stands, plans again from the latest provisional point
// before it saving the state there, and emits every node; from a saved
// state it is runRefresh.
func runResumable(ctx context.Context, c *conversation, sink transcript.ImportSink, opts Options, names map[string]string) error {
	res := opts.Resume
	res.Point = nil
	if c.main == "" || len(c.agents) > 0 {
		return runWhole(ctx, c, sink, opts, names)
	}
	if res.State != nil {
		return runRefresh(ctx, c, sink, opts, names)
	}
	find := newPlanner(ctx, discard{}, opts, names)
	defer find.close()
	r, err := find.resumeFrom(c.main, nil, false, -1, provisionalPoints(c.main, res.Limit), -1)
	if err != nil {
		return err
	}
	saveAt := find.settle().off
	var s *snap
	for j := len(r.provs) - 1; j >= 0; j-- {
		if pt := r.provs[j]; !r.provLost[j] && pt.Offset <= saveAt {
			// The second pass starts from the provisional point: the nodes
			// before it are the same in both passes.
			if s, err = decodeSnap(pt.State); err != nil {
				return err
			}
			break
		}
	}
	p := newPlanner(ctx, sink, opts, names)
	defer p.close()
	r2, err := p.resumeFrom(c.main, s, false, saveAt, nil, 0)
	if err != nil {
		return err
	}
	if p.lines == 0 {
		return p.emptyFile(c.main)
	}
	if res.Saved != nil && r2.point != nil {
		res.Saved(r2.point)
	}
	// What the import parsed is what the first pass read: the second one
	// reads the same bytes again, or fewer from a provisional point.
	res.Parsed = r.parsed
	if err := p.finish(c); err != nil {
		return err
	}
	res.Point = r2.point
	return nil
}

// runRefresh is runResumable from a saved state: one planner restores it,
// plans the lines from its point to the end and emits the nodes planned
// after the point, while another, restored on the other core meanwhile,
// plans again only up to the new point and saves the state there (none
// when the new point is the old one: its state is the one given). So a
// refresh after one turn plans the turn once before it emits, and the
// state is encoded beside the emitting, not before it.
func runRefresh(ctx context.Context, c *conversation, sink transcript.ImportSink, opts Options, names map[string]string) error {
	res := opts.Resume
	s, err := decodeSnap(res.State)
	if err != nil {
		return err
	}
	// The saver reads no further than the new point (its own Limit).
	sopts := opts
	sopts.Resume = &Resume{}
	saver := newPlanner(ctx, discard{}, sopts, names)
	defer saver.close()
	restored := make(chan struct{})
	go func() { saver.restore(s); close(restored) }()
	defer func() { <-restored }()
	p := newPlanner(ctx, sink, opts, names)
	defer p.close()
	r, err := p.resumeFrom(c.main, s, false, -1, nil, -1)
	if err != nil {
		return err
	}
	if r.lost {
		return fmt.Errorf("%w: a line after it changes a node planned before it", ErrCannotResume)
	}
	if p.lines == 0 {
		return p.emptyFile(c.main)
	}
	res.Parsed = r.parsed
	at := p.settle()
	// emit needs only where the checkpoint goes; the state follows.
	p.res.point = &Point{Offset: at.off, Nodes: at.nodes}
	point := &Point{State: res.State, Offset: at.off, Nodes: at.nodes}
	saved := make(chan error, 1)
	if at.off == r.base.off {
		saved <- nil
	} else {
		go func() {
			<-restored
			pt, err := saver.stateAt(c.main, s, at)
			if err == nil {
				point.State = pt.State
				if res.Saved != nil {
					res.Saved(point)
				}
			}
			saved <- err
		}()
	}
	err = p.finish(c)
	if serr := <-saved; err == nil {
		err = serr
	}
	if err != nil {
		return err
	}
	if p.res.point != nil {
		res.Point = point
	}
	return nil
}

// stateAt is the state at the point at of a planner restored from s: the
// lines from s's point up to at planned again, the state saved there.
func (p *planner) stateAt(path string, s *snap, at cand) (*Point, error) {
	p.opts.Resume.Limit = at.off
	r, err := p.resumeFrom(path, s, true, at.off, nil, -1)
	if err != nil {
		return nil, err
	}
	if r.point == nil || r.point.Nodes != at.nodes {
		return nil, fmt.Errorf("%w: planning again up to the new point did not reach it", ErrCannotResume)
	}
	return r.point, nil
}

// runWhole is a resumable import of a conversation with sub-agent files:
// they are planned after the session file and their nodes emitted after
// its own, so nothing of the session file is final before they are read.
// It is imported whole, with no resume point.
func runWhole(ctx context.Context, c *conversation, sink transcript.ImportSink, opts Options, names map[string]string) error {
	res := opts.Resume
	if res.State != nil {
		return fmt.Errorf("%w: sub-agent files lie beside the session", ErrCannotResume)
	}
	if c.main != "" {
		if st, err := os.Stat(c.main); err == nil {
			res.Parsed = st.Size()
		}
	}
	p := newPlanner(ctx, sink, opts, names)
	defer p.close()
	return p.run(c)
}

// provisionalPoints is the ladder of provisional points of the session
// file (read no further than limit when it is > 0), the nearest to the
// end last: the latest that stands is used, so a long last turn costs the
// window and a short one only the last rung.
func provisionalPoints(path string, limit int64) []int64 {
	st, err := os.Stat(path)
	if err != nil {
		return nil
	}
	size := st.Size()
	if limit > 0 && limit < size {
		size = limit
	}
	var ats []int64
	for w := provWindow; w >= provWindow/64 && w > 0; w /= 4 {
		if size-w > 0 {
			ats = append(ats, size-w)
		}
	}
	return ats
}

// provWindow is how far before the end of the file the first pass saves
// its first provisional point (then a quarter as far, down to 1/64): the
// last turn is rarely longer.
var provWindow int64 = 4 << 20

// resumeFrom plans the session file from the saved state (its start when
// nil; restored says the planner already holds it: planner.restore), saving the state at offset saveAt (none when -1) and a
// provisional one at the first line start from each of provAts on.
// The sink holds the first emitFrom nodes (-1: those of the state).
func (p *planner) resumeFrom(path string, state *snap, restored bool, saveAt int64, provAts []int64, emitFrom int) (*resumer, error) {
	f, err := p.startFile(path, false)
	if err != nil {
		return nil, err
	}
	lr := newLineReader(p.limited(f, 0), p.display(path), p.opts.max())
	if state != nil {
		if !restored {
			p.restore(state)
		}
		if lr, err = p.restoreFile(state, f, p.display(path)); err != nil {
			return nil, err
		}
	}
	p.emitFrom = emitFrom
	if emitFrom < 0 {
		p.emitFrom = len(p.nodes)
	}
	from := lr.off
	// A provisional point within provWindow/64 of where planning starts
	// saves less re-planning than saving the state costs (a refresh after
	// one turn would encode the whole planner for a 100 KB tail).
	var ats []int64
	for _, at := range provAts {
		if at >= from+provWindow/64 {
			ats = append(ats, at)
		}
	}
	p.res = &resumer{saveAt: saveAt, provAts: ats, base: cand{from, len(p.nodes)}}
	if err := p.planLines(lr); err != nil {
		return nil, err
	}
	p.res.parsed = lr.off - from
	return p.res, nil
}

// discard is the sink of the planning pass that only finds the resume
// point: its counts and warnings are the second pass's to give.
type discard struct{}

func (discard) Node(transcript.Node) error   { return nil }
func (discard) SetHead(string)               {}
func (discard) SetModel(string)              {}
func (discard) Count(string, string, string) {}
func (discard) Warn(string, int, string)     {}

// limited is f, positioned at off, read no further than the resume's
// Limit when it has one.
func (p *planner) limited(f *os.File, off int64) io.Reader {
	if r := p.opts.Resume; r != nil && r.Limit > 0 {
		return io.LimitReader(f, max(r.Limit-off, 0))
	}
	return f
}
