package render

import (
	"fmt"

	"github.com/ctxfold/ctxfold/transcript"
)

// Preview renders from head as if candidate — a summary node not yet
// stored — were the active summary, and returns the nodes the model would
// read. compact uses it to validate a summary in memory before writing it
// (docs/COMPACT.md §4); the substitution rule is the same one View applies.
func (v *View) Preview(candidate *transcript.Node) ([]*transcript.Node, error) {
	g := v.Graph
	if v.Head < 0 {
		return nil, fmt.Errorf("%s: empty session", g.S.Dir)
	}
	spine := g.Spine(v.Head)
	ids := candidate.CoversIDs()
	covered := make([]int, len(ids))
	for k, id := range ids {
		i, ok := g.Lookup(id)
		if !ok {
			return nil, fmt.Errorf("candidate summary covers %q, which does not exist", id)
		}
		covered[k] = i
	}
	splice := -1
	if candidate.Predecessor != "" {
		i, ok := g.Lookup(candidate.Predecessor)
		if !ok {
			return nil, fmt.Errorf("candidate summary's predecessor %q does not exist", candidate.Predecessor)
		}
		splice = i
	}
	at, ok := g.SegmentOnSpine(spine, covered, splice)
	if !ok {
		return nil, fmt.Errorf("candidate summary's coverage is not a contiguous segment of HEAD's spine")
	}
	out := make([]*transcript.Node, 0, len(spine)-len(covered)+1)
	for k, i := range spine {
		switch {
		case k == at:
			out = append(out, candidate)
		case k > at && k < at+len(covered):
		default:
			n, err := g.S.Node(i)
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		}
	}
	return out, nil
}
