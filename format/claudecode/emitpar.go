package claudecode

// This file builds the second pass's nodes on every core, ahead of the
// emit loop that hands them to the sink in order: building a node reads
// its lines again and decodes them, which needs only the finished plan
// (docs/BENCHMARKS.md, "the cold path").

import (
	"github.com/ctxfold/ctxfold/transcript"
)

// builtWarning is a warning building a node gave: the emit loop hands it
// to the sink just before the node, where building used to.
type builtWarning struct {
	ref lineRef
	msg string
}

// built is one node built, or the error building it.
type built struct {
	node  transcript.Node
	err   error
	warns []builtWarning
}

// builtBatch is the nodes of order[from:from+len(out)].
type builtBatch struct {
	from int
	out  []built
}

// buildBatch is how many nodes a worker builds at a time.
const buildBatch = 32

// builder runs the workers; next returns the nodes in order.
type builder struct {
	batches *ordered[*builtBatch]
	cur     *builtBatch
	k       int
}

// startBuilding builds order[p.emitFrom:] on GOMAXPROCS workers, a few
// batches ahead of the emit loop.
func (p *planner) startBuilding(order []int32) *builder {
	batches := func(yield func(*builtBatch) bool) {
		for from := p.emitFrom; from < len(order); from += buildBatch {
			if !yield(&builtBatch{from: from, out: make([]built, min(buildBatch, len(order)-from))}) {
				return
			}
		}
	}
	return &builder{batches: startOrdered(2, batches, func(b *builtBatch) {
		for j := range b.out {
			r := &b.out[j]
			r.node, r.err = p.buildNode(order[b.from+j], &r.warns)
		}
	})}
}

// next returns the next node in order; the emit loop calls it once per
// node of order[p.emitFrom:].
func (nb *builder) next() *built {
	if nb.cur == nil || nb.k == len(nb.cur.out) {
		nb.cur, _ = nb.batches.next()
		nb.k = 0
	}
	b := &nb.cur.out[nb.k]
	nb.k++
	return b
}

// close stops the building and waits for the workers, so none reads a
// file once emit returns.
func (nb *builder) close() { nb.batches.close() }
