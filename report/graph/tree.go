package graph

import (
	"bufio"
	"io"
	"unicode/utf8"

	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/transcript"
)

// defaultPreview is the preview length when the terminal width is unknown.
const defaultPreview = 60

// writeTree streams the terminal drawing: lines are produced by the layout
// walk and written a batch at a time, so memory stays bounded by the batch
// whatever the session's size.
func writeTree(w io.Writer, l *layout, c *counter, opts Options) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	fig, err := c.capsule(l.fold)
	if err != nil {
		return err
	}
	p := opts.Palette
	g := l.g
	head := g.Head()
	// Count every drawn node in one pass (cached by estimate), then
	// stream: content is read a batch at a time.
	var drawn []int
	for it, on := range l.shown {
		if on {
			drawn = append(drawn, l.node(it))
		}
	}
	if err := c.count(drawn); err != nil {
		return err
	}
	const batchSize = 256
	batch := make([]line, 0, batchSize)
	flush := func() error {
		idx := make([]int, len(batch))
		for k, ln := range batch {
			idx[k] = l.node(ln.item)
		}
		nodes, toks, err := c.load(idx)
		if err != nil {
			return err
		}
		for k, ln := range batch {
			it, i := ln.item, idx[k]
			ref := g.Ref(i)
			if l.cut[it] {
				bw.WriteString(ln.prefix + p.Dim("⋮") + "\n")
			}
			id := sanitize(ref.ID)
			var text string
			switch {
			case l.kind(it) == kindCapsule:
				text = p.Magenta(p.Bold("◆ "+id)) + "  " + p.Magenta("covers "+report.Thousands(fig.covers)+" nodes · "+
					report.Thousands(fig.before)+" → "+report.Thousands(fig.after)+" tokens")
			case g.IsRelic(i):
				text = p.Dim("○ " + id + "  relic · superseded summary · " + report.Thousands(toks[k]) + " tok")
			default:
				text = nodeText(l, ln, i, head, toks[k], nodes[k], opts)
			}
			if ln.prefix != "" {
				bw.WriteString(p.Dim(ln.prefix))
			}
			bw.WriteString(text + "\n")
		}
		batch = batch[:0]
		return nil
	}
	err = l.walk(func(ln line) error {
		batch = append(batch, ln)
		if len(batch) == batchSize {
			return flush()
		}
		return nil
	})
	if err == nil && len(batch) > 0 {
		err = flush()
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

// nodeText is a raw node's line after the tree art: glyph, id, role and
// tokens, a preview clipped to the width, and the HEAD mark.
func nodeText(l *layout, ln line, i, head, tok int, node *transcript.Node, opts Options) string {
	p := opts.Palette
	g := l.g
	it := ln.item
	ref := g.Ref(i)
	id := sanitize(ref.ID)
	glyph := "●"
	meta := roleLabel(ref)
	if ln.inside {
		glyph = "◦"
	}
	if ref.Summary {
		// The active summary when no branch carries it.
		glyph, meta = "◇", "summary · applies to no branch"
	}
	if l.spawned[it] {
		meta += " · spawned by " + sanitize(g.ID(g.Caller(i)))
	}
	if l.pinned[ref.ID] {
		meta += " · pinned"
	}
	mark, markLen := "", 0
	if i == head && !ln.inside {
		mark, markLen = "  "+p.Green(p.Bold("← HEAD")), 8
	}
	left := glyph + " " + id + "  " + meta + " · " + report.Thousands(tok) + " tok"
	max := defaultPreview
	if opts.Width > 0 {
		max = opts.Width - utf8.RuneCountInString(ln.prefix+left) - 3 - markLen
	}
	pv := truncate(sanitize(previewText(node)), max)
	if i == head && !ln.inside {
		left = p.Bold(left)
	} else if ln.inside {
		left = p.Dim(left)
	}
	text := left
	if pv != "" {
		text += " · " + pv
	}
	text += mark
	return text
}
