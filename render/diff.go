package render

import "github.com/ctxfold/ctxfold/dag"

// Diff is the raw view of a branch beside its rendered view: what the
// active summary folds away there and what stands in for it. It decides
// nothing of its own: both views come from Build.
type Diff struct {
	Raw, Rendered *View
	// Folded are the node indexes of Raw that Rendered does not hold, in
	// reading order: the segment the summary substitutes (docs/FORMAT.md §4).
	Folded []int
	// Summary is the node index standing in for Folded, -1 when the
	// branch renders raw.
	Summary int
}

// BuildDiff renders the branch ending at head ("" for HEAD) both ways.
func BuildDiff(g *dag.Graph, head string) (*Diff, error) {
	raw, err := Build(g, head, true)
	if err != nil {
		return nil, err
	}
	view, err := Build(g, head, false)
	if err != nil {
		return nil, err
	}
	d := &Diff{Raw: raw, Rendered: view, Summary: view.Substitution.Summary}
	if view.Summarized() {
		sub := view.Substitution
		d.Folded = append([]int(nil), raw.Indexes[sub.At:sub.At+sub.Len]...)
	}
	return d, nil
}
