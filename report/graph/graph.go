// Package graph draws a session's DAG: a terminal tree, JSON rows (docs/FORMAT.md §4's
// wire contract), Graphviz DOT, Mermaid and one self-contained HTML page.
// Every format draws the same layout, in which the active summary is a
// capsule on exactly the branches whose rendered context carries it — the
// fold comes from dag.Fold, i.e. from docs/FORMAT.md §4's rendering rule, never from a
// rule of its own. Token figures come from the estimate package only. It
// reads node content to preview it; it never writes a session.
package graph

import (
	"context"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// Format names an output format.
type Format string

const (
	FormatTree    Format = "tree"
	FormatJSON    Format = "json"
	FormatDOT     Format = "dot"
	FormatMermaid Format = "mermaid"
	FormatHTML    Format = "html"
)

// Formats lists every format, for flag validation and completion.
var Formats = []Format{FormatTree, FormatJSON, FormatDOT, FormatMermaid, FormatHTML}

// ParseFormat validates a format name.
func ParseFormat(s string) (Format, error) {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		if string(f) == s {
			return f, nil
		}
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown format %q (want %s)", s, strings.Join(names, ", "))
}

// Options select what is drawn and how.
type Options struct {
	Format Format
	// Expand draws the nodes folded into the capsule inside it.
	Expand bool
	// Around limits the drawing to the nodes within Depth steps of this id.
	Around string
	Depth  int
	// Estimate selects the model whose tokenizer counts tokens.
	Estimate estimate.Options
	// Palette colours the tree (identity when colour is off).
	Palette report.Palette
	// Width is the terminal width (0: previews keep a fixed length).
	Width int
	// Session is how the session is named in JSON and HTML output.
	Session string
	// File is the transcript file Session is the cache session of, "" for
	// a session directory (the json format's "file").
	File string
	// Pinned are the node ids the user pinned (store.Session.Pins):
	// the tree and the diagrams say "pinned", JSON rows carry pinned: true.
	Pinned map[string]bool
}

// Write draws g in opts.Format.
func Write(ctx context.Context, w io.Writer, g *dag.Graph, opts Options) error {
	// The page always holds the capsule's folded nodes, so a click can
	// open it; --expand only opens it from the start.
	l, err := newLayout(g, opts.Expand || opts.Format == FormatHTML, opts.Around, opts.Depth)
	if err != nil {
		return err
	}
	l.pinned = opts.Pinned
	c := &counter{ctx: ctx, g: g, opts: opts.Estimate}
	switch opts.Format {
	case FormatTree, "":
		return writeTree(w, l, c, opts)
	case FormatJSON:
		return writeJSON(w, l, c, opts)
	case FormatDOT:
		return writeDOT(w, l, c, opts)
	case FormatMermaid:
		return writeMermaid(w, l, c, opts)
	case FormatHTML:
		return writeHTML(ctx, w, l, c, opts)
	}
	return fmt.Errorf("unknown format %q", opts.Format)
}

// counter reads nodes and measures them through estimate.PerNode (cached
// per-node counts of any stored node): the one place this package obtains
// token figures. Counts are kept per node index, content is read per batch.
type counter struct {
	ctx    context.Context
	g      *dag.Graph
	opts   estimate.Options
	tokens []int32
	have   []bool
}

// count makes sure every node of idx has its count.
func (c *counter) count(idx []int) error {
	if c.tokens == nil {
		c.tokens = make([]int32, c.g.Len())
		c.have = make([]bool, c.g.Len())
	}
	var want []int
	for _, i := range idx {
		if !c.have[i] {
			c.have[i] = true
			want = append(want, i)
		}
	}
	if len(want) == 0 {
		return nil
	}
	counts, err := estimate.PerNode(c.ctx, c.g.S, want, c.opts)
	if err != nil {
		return err
	}
	for k, i := range want {
		c.tokens[i] = int32(counts[k].Tokens)
	}
	return nil
}

// resolved is the model and encoding the counts use, as estimate resolves
// c.opts — asked of estimate.Nodes itself (with no nodes, so nothing is
// counted) rather than restating its resolution rules here.
func (c *counter) resolved() (*estimate.Result, error) {
	return estimate.Nodes(c.ctx, nil, c.opts)
}

// load reads the given nodes and their per-node token counts.
func (c *counter) load(idx []int) ([]*transcript.Node, []int, error) {
	if err := c.count(idx); err != nil {
		return nil, nil, err
	}
	nodes := make([]*transcript.Node, len(idx))
	toks := make([]int, len(idx))
	for k, i := range idx {
		if err := c.ctx.Err(); err != nil {
			return nil, nil, err
		}
		n, err := c.g.S.Node(i)
		if err != nil {
			return nil, nil, err
		}
		nodes[k], toks[k] = n, int(c.tokens[i])
	}
	return nodes, toks, nil
}

// each visits nodes in batches, so large sessions are never loaded whole.
func (c *counter) each(idx []int, fn func(k int, n *transcript.Node, tokens int) error) error {
	if err := c.count(idx); err != nil {
		return err
	}
	const batch = 512
	for start := 0; start < len(idx); start += batch {
		end := min(start+batch, len(idx))
		nodes, toks, err := c.load(idx[start:end])
		if err != nil {
			return err
		}
		for k := range nodes {
			if err := fn(start+k, nodes[k], toks[k]); err != nil {
				return err
			}
		}
	}
	return nil
}

// capsuleFigures are the capsule's "covers N nodes · before → after".
type capsuleFigures struct {
	covers, before, after int
}

// capsule measures the active summary: before is what the covered segment
// costs when rendered raw (what docs/FORMAT.md §4 drops), after the summary itself.
func (c *counter) capsule(f *dag.Fold) (capsuleFigures, error) {
	fig := capsuleFigures{covers: len(f.CoversIDs)}
	if f.Summary < 0 {
		return fig, nil
	}
	idx := append(append([]int(nil), f.Segment...), f.Summary)
	err := c.each(idx, func(k int, _ *transcript.Node, t int) error {
		if k == len(idx)-1 {
			fig.after = t
		} else {
			fig.before += t
		}
		return nil
	})
	return fig, err
}

// occupancy is estimate's figure for HEAD's rendered view.
func occupancy(ctx context.Context, g *dag.Graph, opts estimate.Options) (*estimate.Result, error) {
	v, err := render.Build(g, "", false)
	if err != nil {
		return nil, err
	}
	return estimate.View(ctx, v, opts)
}

// sanitize makes transcript text safe for one terminal line: control,
// bidi and invalid characters are neutralised by render.TextSafe, the one
// rule of every text output, then line breaks, tabs and runs of spaces
// collapse to one space.
func sanitize(s string) string {
	return strings.Join(strings.Fields(render.TextSafe(s)), " ")
}

// truncate cuts s to at most max runes, marking the cut with "…".
func truncate(s string, max int) string {
	if max <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-1]) + "…"
}

// previewText is a node's most telling text: its plain text, else its
// tool calls, tool results or thinking.
func previewText(n *transcript.Node) string {
	if t := n.Content.PlainText(); strings.TrimSpace(t) != "" {
		return t
	}
	var parts []string
	for _, c := range n.AllToolCalls() {
		parts = append(parts, "→ "+c.Name+"("+c.ArgumentsText()+")")
	}
	if len(parts) > 0 {
		return strings.Join(parts, " ")
	}
	for _, r := range n.ToolResults() {
		parts = append(parts, r.Text)
	}
	if n.Content.IsBlocks {
		for _, b := range n.Content.Blocks {
			if b.Type == transcript.BlockThinking {
				parts = append(parts, "(thinking) "+b.Text)
			}
		}
	}
	return strings.Join(parts, " ")
}

// fullText is everything a node says, for the HTML details pane.
func fullText(n *transcript.Node) string {
	var b strings.Builder
	if !n.Content.IsBlocks {
		b.WriteString(n.Content.Text)
	} else {
		for _, bl := range n.Content.Blocks {
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			switch bl.Type {
			case transcript.BlockText:
				b.WriteString(bl.Text)
			case transcript.BlockThinking:
				b.WriteString("[thinking]\n" + bl.Text)
			case transcript.BlockToolCall:
				b.WriteString("[tool call " + bl.ID + "] " + bl.Name + "(" + transcript.ArgumentsText(bl.Arguments) + ")")
			case transcript.BlockToolResult:
				b.WriteString("[tool result " + bl.ToolCallID + "]\n" + bl.Text)
			case transcript.BlockImage:
				b.WriteString("[image " + bl.MediaType + " " + bl.Source + "]")
			default:
				b.WriteString("[" + bl.Type + "]")
			}
		}
	}
	for _, c := range n.ToolCalls {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("[tool call " + c.ID + "] " + c.Name + "(" + c.ArgumentsText() + ")")
	}
	return b.String()
}

// roleLabel is "tool(bash)" for a named tool result, else the role.
func roleLabel(r store.NodeRef) string {
	if r.Role == transcript.RoleTool && r.Name != "" {
		return "tool(" + sanitize(r.Name) + ")"
	}
	return string(r.Role)
}
