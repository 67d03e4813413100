package graph

import (
	"io"

	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/transcript"
)

// Row is one node on the wire (seed §6). Coverage is restated from
// covers_ids alone: no sequence arithmetic, and nothing but on_head_spine,
// in_head_view and head depends on HEAD — those describe HEAD, they filter
// nothing.
type Row struct {
	ID          string  `json:"id"`
	Predecessor *string `json:"predecessor"`
	Caller      string  `json:"caller,omitempty"`
	Role        string  `json:"role"`
	Name        string  `json:"name,omitempty"`
	Tokens      int     `json:"tokens"`
	Line        int     `json:"line"`
	OnHeadSpine bool    `json:"on_head_spine"`
	InHeadView  bool    `json:"in_head_view"`
	Head        bool    `json:"head,omitempty"`
	Tip         bool    `json:"tip,omitempty"`
	// CarriesSummary: rendering from this node substitutes the active
	// summary (seed §3); Folded: the node is folded into the capsule.
	CarriesSummary bool `json:"carries_summary"`
	Folded         bool `json:"folded,omitempty"`
	Summary        bool `json:"summary,omitempty"`
	// CoversIDs is set on the active summary's row only; a relic carries
	// SupersededSummary and no covers_ids.
	CoversIDs         []string `json:"covers_ids,omitempty"`
	SupersededSummary bool     `json:"superseded_summary,omitempty"`
	// Applies is set on the active summary's row: whether any branch
	// renders with it.
	Applies *bool `json:"applies,omitempty"`
}

// Document is the json format: one object for the session.
type Document struct {
	Session         string `json:"session"`
	Head            string `json:"head"`
	ActiveSummaryID string `json:"active_summary_id"`
	// Model and Encoding are what counted the rows' tokens, as estimate
	// resolved them (the --model flag, else the session's recorded model,
	// else the config's); Model is "" when none was known and the counts
	// use the default encoding.
	Model    string `json:"model"`
	Encoding string `json:"encoding"`
	Nodes    []Row  `json:"nodes"`
}

// rows builds the wire rows in file order: every node, folded or not,
// unless --around limits the drawing.
func rows(l *layout, c *counter) ([]Row, error) {
	g, f := l.g, l.fold
	head := g.Head()
	onSpine := make([]bool, g.Len())
	inView := make([]bool, g.Len())
	if head >= 0 {
		for _, i := range g.Spine(head) {
			onSpine[i] = true
		}
		// What the model reads is decided in one place: render.Build.
		view, err := render.Build(g, "", false)
		if err != nil {
			return nil, err
		}
		for _, i := range view.Indexes {
			inView[i] = true
		}
	}
	tip := make([]bool, g.Len())
	for _, i := range g.Tips() {
		tip[i] = true
	}
	var idx []int
	for i := 0; i < g.Len(); i++ {
		if !l.limited || l.shown[i] || l.shown[l.n+i] {
			idx = append(idx, i)
		}
	}
	out := make([]Row, 0, len(idx))
	err := c.each(idx, func(k int, _ *transcript.Node, tokens int) error {
		i := idx[k]
		ref := g.Ref(i)
		r := Row{ID: ref.ID, Caller: ref.Caller, Role: string(ref.Role), Name: ref.Name, Tokens: tokens, Line: ref.Line,
			OnHeadSpine: onSpine[i], InHeadView: inView[i], Head: i == head, Tip: tip[i],
			CarriesSummary: f.Carries(i), Folded: f.Folded(i), Summary: ref.Summary}
		if ref.Predecessor != "" {
			p := ref.Predecessor
			r.Predecessor = &p
		}
		switch {
		case i == f.Summary:
			// seed §6: the active row carries covers_ids, verbatim from
			// metadata.covers_ids, extended with covered turns' caller
			// subtrees, minus ids that no longer exist.
			r.CoversIDs = append([]string{}, f.CoversIDs...)
			applies := f.Applies
			r.Applies = &applies
		case g.IsRelic(i):
			r.SupersededSummary = true
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

func writeJSON(w io.Writer, l *layout, c *counter, opts Options) error {
	rs, err := rows(l, c)
	if err != nil {
		return err
	}
	used, err := c.resolved()
	if err != nil {
		return err
	}
	g := l.g
	doc := Document{Session: opts.Session, Model: used.Model, Encoding: used.Encoding, Nodes: rs}
	if h := g.Head(); h >= 0 {
		doc.Head = g.ID(h)
	}
	if l.fold.Summary >= 0 {
		doc.ActiveSummaryID = g.ID(l.fold.Summary)
	}
	return report.JSON(w, doc)
}
