package graph

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/transcript"
)

// diagramNode is what DOT and Mermaid say about one drawn item.
type diagramNode struct {
	name  string // a generated name (never transcript text)
	kind  itemKind
	lines []string // label lines, raw text (each writer escapes)
	relic bool
	head  bool
}

// diagram walks the drawn items for the graph languages: fn gets each item,
// then edge each parent → child link. Names are generated ("i12"), so no
// transcript text ever reaches a position where it is syntax.
func diagram(l *layout, c *counter, node func(diagramNode) error, edge func(from, to string, spawned bool) error) error {
	fig, err := c.capsule(l.fold)
	if err != nil {
		return err
	}
	g := l.g
	var items []int
	err = l.walk(func(ln line) error {
		items = append(items, ln.item)
		return nil
	})
	if err != nil {
		return err
	}
	idx := make([]int, len(items))
	for k, it := range items {
		idx[k] = l.node(it)
	}
	err = c.each(idx, func(k int, n *transcript.Node, tokens int) error {
		it, i := items[k], idx[k]
		ref := g.Ref(i)
		d := diagramNode{name: fmt.Sprintf("i%d", it), kind: l.kind(it), head: i == g.Head() && it < l.n}
		switch {
		case d.kind == kindCapsule:
			d.lines = []string{"◆ " + ref.ID, fmt.Sprintf("covers %s nodes", report.Thousands(fig.covers)),
				fmt.Sprintf("%s → %s tokens", report.Thousands(fig.before), report.Thousands(fig.after))}
		case g.IsRelic(i):
			d.relic = true
			d.lines = []string{ref.ID, "relic · superseded summary", report.Thousands(tokens) + " tok"}
		default:
			meta := roleLabel(ref) + " · " + report.Thousands(tokens) + " tok"
			if ref.Summary {
				meta = "summary · applies to no branch · " + report.Thousands(tokens) + " tok"
			}
			if d.head {
				meta += " · HEAD"
			}
			if l.pinned[ref.ID] {
				meta += " · pinned"
			}
			d.lines = []string{ref.ID, meta}
			if pv := truncate(sanitize(previewText(n)), 40); pv != "" {
				d.lines = append(d.lines, pv)
			}
		}
		for k := range d.lines {
			d.lines[k] = sanitize(d.lines[k])
		}
		return node(d)
	})
	if err != nil {
		return err
	}
	for _, it := range items {
		for _, ch := range l.children[it] {
			if err := edge(fmt.Sprintf("i%d", it), fmt.Sprintf("i%d", ch), l.spawned[ch]); err != nil {
				return err
			}
		}
	}
	return nil
}

// dotString quotes s for a DOT label: backslash and quote escaped (so no
// escString sequence like \N or \G survives from transcript text).
func dotString(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `"`, `\"`)
	return `"` + s + `"`
}

func writeDOT(w io.Writer, l *layout, c *counter, _ Options) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString("digraph ctxfold {\n")
	bw.WriteString("  graph [rankdir=TB, fontname=\"Helvetica\"];\n")
	bw.WriteString("  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", fontname=\"Helvetica\", fontsize=10];\n")
	bw.WriteString("  edge [arrowsize=0.6];\n")
	var inside []string
	capsule := ""
	err := diagram(l, c, func(d diagramNode) error {
		var label []string
		for _, s := range d.lines {
			label = append(label, dotString(s)[1:len(dotString(s))-1])
		}
		attrs := "label=\"" + strings.Join(label, `\n`) + "\""
		switch {
		case d.kind == kindCapsule:
			capsule = d.name
			attrs += ", shape=doubleoctagon, fillcolor=\"#efe3ff\", color=\"#7b3fc4\", class=\"capsule\""
		case d.relic:
			attrs += ", shape=note, style=\"dashed\", fontcolor=\"#777777\", class=\"relic\""
		case d.kind == kindInside:
			attrs += ", style=\"rounded,dashed\", fontcolor=\"#555555\""
			inside = append(inside, d.name)
		}
		if d.head {
			attrs += ", penwidth=2.5, color=\"#1a7f37\""
		}
		_, err := fmt.Fprintf(bw, "  %s [%s];\n", d.name, attrs)
		return err
	}, func(from, to string, spawned bool) error {
		attrs := ""
		if spawned {
			attrs = " [style=dashed, label=\"spawned\"]"
		}
		_, err := fmt.Fprintf(bw, "  %s -> %s%s;\n", from, to, attrs)
		return err
	})
	if err != nil {
		return err
	}
	if len(inside) > 0 && capsule != "" {
		// The expanded capsule: its folded nodes in one dashed cluster.
		fmt.Fprintf(bw, "  subgraph cluster_capsule {\n    label=%s; style=dashed; color=\"#7b3fc4\";\n", dotString("folded into "+l.g.ID(l.fold.Summary)))
		for _, n := range inside {
			fmt.Fprintf(bw, "    %s;\n", n)
		}
		bw.WriteString("  }\n")
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

// mermaidText encodes label text as Mermaid entity codes (#60; for <), so
// no transcript character is ever Mermaid or HTML syntax.
func mermaidText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == ' ' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || strings.ContainsRune(".,:_-/()", r) {
			b.WriteRune(r)
			continue
		}
		fmt.Fprintf(&b, "#%d;", r)
	}
	return b.String()
}

func writeMermaid(w io.Writer, l *layout, c *counter, _ Options) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString("flowchart TD\n")
	var inside, heads, relics []string
	capsule := ""
	var edges []string
	err := diagram(l, c, func(d diagramNode) error {
		parts := make([]string, len(d.lines))
		for k, s := range d.lines {
			parts[k] = mermaidText(s)
		}
		label := `"` + strings.Join(parts, "<br/>") + `"`
		var shape string
		switch {
		case d.kind == kindCapsule:
			capsule = d.name
			shape = "{{" + label + "}}"
		case d.relic:
			relics = append(relics, d.name)
			shape = ">" + label + "]"
		case d.kind == kindInside:
			inside = append(inside, d.name)
			shape = "([" + label + "])"
		default:
			shape = "[" + label + "]"
		}
		if d.head {
			heads = append(heads, d.name)
		}
		_, err := fmt.Fprintf(bw, "  %s%s\n", d.name, shape)
		return err
	}, func(from, to string, spawned bool) error {
		arrow := " --> "
		if spawned {
			arrow = " -. spawned .-> "
		}
		edges = append(edges, "  "+from+arrow+to+"\n")
		return nil
	})
	if err != nil {
		return err
	}
	if len(inside) > 0 && capsule != "" {
		fmt.Fprintf(bw, "  subgraph folded[\"%s\"]\n", mermaidText("folded into "+l.g.ID(l.fold.Summary)))
		for _, n := range inside {
			fmt.Fprintf(bw, "    %s\n", n)
		}
		bw.WriteString("  end\n")
	}
	for _, e := range edges {
		bw.WriteString(e)
	}
	bw.WriteString("  classDef capsule fill:#efe3ff,stroke:#7b3fc4,stroke-width:2px\n")
	bw.WriteString("  classDef relic fill:#f4f4f4,stroke:#999999,stroke-dasharray:4 3,color:#777777\n")
	bw.WriteString("  classDef head stroke:#1a7f37,stroke-width:3px\n")
	if capsule != "" {
		fmt.Fprintf(bw, "  class %s capsule\n", capsule)
	}
	if len(relics) > 0 {
		fmt.Fprintf(bw, "  class %s relic\n", strings.Join(relics, ","))
	}
	if len(heads) > 0 {
		fmt.Fprintf(bw, "  class %s head\n", strings.Join(heads, ","))
	}
	return bw.Flush()
}
