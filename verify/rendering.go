package verify

import (
	"github.com/ctxfold/ctxfold/render"
)

// checkRendering applies docs/FORMAT.md §4 through dag.SegmentOnSpine and
// render.Build — the rule every command renders with — and checks what it
// yields.
//
// It does not render every branch tip (that is O(tips × depth)). The
// active summary's segment is a predecessor chain ending at its last
// covered node L, so a tip's spine holds the whole segment exactly when
// the tip is L or lies below L, and all those spines agree with L's spine
// up to L. One SegmentOnSpine call on L's spine therefore decides every
// such tip: each renders [root…, S, kept tail…] with the covered ids
// absent, or — when the rule refuses the segment — raw. Every other tip
// lacks L and renders raw. HEAD's view, and one tip of each kind, are then
// rendered for real with render.Build and compared with that expectation.
func (c *checker) checkRendering() error {
	s, g := c.s, c.g
	c.subLast = -1
	c.tips = g.Tips()
	c.res.Tips = len(c.tips)
	for i := range s.Len() {
		if p := g.Pred(i); p >= 0 && s.IsSummary(p) {
			c.errAt(Rendering, CodeSummaryOnSpine, i, "its predecessor %q is a summary node: a summary stands in for a segment and is never a link of a chain; a render from here reads it as a raw turn", g.ID(p))
		}
	}
	a := c.active
	if a == nil || !a.contiguous {
		return nil
	}
	a.covered = c.covered(a)
	last := a.last
	if g.Depth(last) < 0 {
		return nil
	}
	at, ok := g.SegmentOnSpine(g.Spine(last), a.covered, g.Pred(a.summary))
	if !ok {
		var holding []int
		for _, t := range c.tips {
			if g.IsAncestor(last, t) {
				holding = append(holding, t)
			}
		}
		if len(holding) > 0 {
			c.errAt(Rendering, CodeRenderNotSubstituted, a.summary,
				"%d branch tip(s) whose spine holds the whole covered segment render raw (first: %q): the active summary never reaches the prompt",
				len(holding), g.ID(holding[0]))
		}
		return nil
	}
	c.subLast = last
	// Render for real, with render.Build, HEAD and one tip of each kind
	// (holding the segment, and not), and compare with the expectation.
	views := []int{g.Head()}
	holdingTip, rawTip := -1, -1
	for _, t := range c.tips {
		if c.substitutes(t) {
			holdingTip = max(holdingTip, t)
		} else if g.Depth(t) >= 0 {
			rawTip = max(rawTip, t)
		}
	}
	views = append(views, holdingTip, rawTip)
	for k, h := range views {
		if h < 0 || g.Depth(h) < 0 || (k > 0 && h == views[0]) {
			continue
		}
		if err := c.compareView(h, k == 0, at); err != nil {
			return err
		}
	}
	return nil
}

// compareView renders from h and reports where the view departs from docs/FORMAT.md
// §4: [root…, S, kept tail…] when h is L or lies below it, the raw spine
// otherwise.
func (c *checker) compareView(h int, isHead bool, at int) error {
	g, a := c.g, c.active
	head := g.ID(h)
	if isHead {
		head = ""
	}
	view, err := render.Build(g, head, false)
	if err != nil {
		return err
	}
	spine := g.Spine(h)
	want := spine
	if c.substitutes(h) {
		want = make([]int, 0, len(spine)-len(a.covered)+1)
		want = append(want, spine[:at]...)
		want = append(want, a.summary)
		want = append(want, spine[at+len(a.covered):]...)
	}
	if k := firstDifference(view.Indexes, want); k >= 0 {
		got, exp := "(end)", "(end)"
		if k < len(view.Indexes) {
			got = g.ID(view.Indexes[k])
		}
		if k < len(want) {
			exp = g.ID(want[k])
		}
		what := "the branch tip"
		if isHead {
			what = "HEAD"
		}
		c.errAt(Rendering, CodeRenderMismatch, h, "the rendered view of %s has %q at position %d where docs/FORMAT.md §4 gives %q", what, got, k, exp)
	}
	return nil
}

func firstDifference(a, b []int) int {
	for k := 0; k < len(a) && k < len(b); k++ {
		if a[k] != b[k] {
			return k
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}
