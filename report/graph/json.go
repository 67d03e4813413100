package graph

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
)

// Row is one node on the wire (docs/FORMAT.md §4). Coverage is restated from
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
	// Pinned: the user pinned the node (ctxfold pin).
	Pinned bool `json:"pinned,omitempty"`
	Tip    bool `json:"tip,omitempty"`
	// CarriesSummary: rendering from this node substitutes the active
	// summary (docs/FORMAT.md §4); Folded: the node is folded into the capsule.
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
	File            string `json:"file,omitempty"`
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

// eachRow hands the wire rows to fn in file order: every node, folded or
// not, unless --around limits the drawing. Rows are made one at a time,
// so a million-node document is never held whole.
func eachRow(l *layout, c *counter, fn func(Row) error) error {
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
			return err
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
	if err := c.count(idx); err != nil {
		return err
	}
	for _, i := range idx {
		if err := c.ctx.Err(); err != nil {
			return err
		}
		ref := g.Ref(i)
		r := Row{ID: ref.ID, Caller: ref.Caller, Role: string(ref.Role), Name: ref.Name, Tokens: int(c.tokens[i]), Line: ref.Line,
			OnHeadSpine: onSpine[i], InHeadView: inView[i], Head: i == head, Tip: tip[i],
			CarriesSummary: f.Carries(i), Folded: f.Folded(i), Summary: ref.Summary, Pinned: l.pinned[ref.ID]}
		if ref.Predecessor != "" {
			p := ref.Predecessor
			r.Predecessor = &p
		}
		switch {
		case i == f.Summary:
			// docs/FORMAT.md §4: the active row carries covers_ids, verbatim from
			// metadata.covers_ids, extended with covered turns' caller
			// subtrees, minus ids that no longer exist.
			r.CoversIDs = append([]string{}, f.CoversIDs...)
			applies := f.Applies
			r.Applies = &applies
		case g.IsRelic(i):
			r.SupersededSummary = true
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// writeJSON writes the Document as report.JSON would (keys sorted at every
// level, schema_version added), but streams its rows: marshalling the
// whole document and re-sorting it took gigabytes on a million nodes.
func writeJSON(w io.Writer, l *layout, c *counter, opts Options) error {
	used, err := c.resolved()
	if err != nil {
		return err
	}
	g := l.g
	doc := Document{File: opts.File, Session: opts.Session, Model: used.Model, Encoding: used.Encoding}
	if h := g.Head(); h >= 0 {
		doc.Head = g.ID(h)
	}
	if l.fold.Summary >= 0 {
		doc.ActiveSummaryID = g.ID(l.fold.Summary)
	}
	// The document with an empty node list, split where the rows go.
	whole, err := report.JSONLine(doc)
	if err != nil {
		return err
	}
	const empty = `"nodes":null`
	at := bytes.Index(whole, []byte(empty))
	if at < 0 {
		return fmt.Errorf("graph json: no %s in %s", empty, whole)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.Write(whole[:at])
	bw.WriteString(`"nodes":[`)
	first := true
	err = eachRow(l, c, func(r Row) error {
		line, err := report.SortedJSON(r)
		if err != nil {
			return err
		}
		if !first {
			bw.WriteByte(',')
		}
		first = false
		_, err = bw.Write(line)
		return err
	})
	if err != nil {
		return err
	}
	bw.WriteByte(']')
	bw.Write(whole[at+len(empty):])
	bw.WriteByte('\n')
	return bw.Flush()
}
