// Package render owns what the model reads next turn: the rendered view
// from a head (dag's segment substitution applied) and its conversion to
// each output format (text, ids, jsonl, OpenAI Chat Completions, Anthropic
// Messages, Gemini generateContent). Every command that needs "what the model sees" goes through
// View; nothing else decides it. It does not count tokens (estimate/) and
// never writes to a session.
package render

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/transcript"
)

// Format names an output format of render.
type Format string

const (
	FormatText      Format = "text"
	FormatIDs       Format = "ids"
	FormatJSONL     Format = "jsonl"
	FormatOpenAI    Format = "openai"
	FormatAnthropic Format = "anthropic"
	// FormatResponses is the `input` of an OpenAI Responses API request,
	// which can say what Chat Completions cannot: developer messages and
	// a client's own compaction (what Codex CLI sends).
	FormatResponses Format = "responses"
	FormatGemini    Format = "gemini"
)

// Formats lists every format, for flag validation and completion.
var Formats = []Format{FormatText, FormatIDs, FormatJSONL, FormatOpenAI, FormatAnthropic, FormatResponses, FormatGemini}

// ParseFormat validates a format name.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown format %q (want %s)", s, strings.Join(names, ", "))
}

// HeadError: the requested head cannot be rendered from.
type HeadError struct {
	Dir, ID, Msg string
}

func (e *HeadError) Error() string { return fmt.Sprintf("%s: --head %q: %s", e.Dir, e.ID, e.Msg) }

// View is what the model reads from one head.
type View struct {
	Graph *dag.Graph
	// Head is the node rendered from (-1 for an empty session).
	Head int
	Raw  bool
	// Indexes are the node indexes in reading order, root first.
	Indexes []int
	// Substitution says whether (and where) the active summary replaced
	// its covered segment.
	Substitution dag.Substitution
}

// Build renders from head (an id; "" means the session's HEAD). With raw,
// summaries are ignored: the pre-compaction view, always reconstructible.
func Build(g *dag.Graph, head string, raw bool) (*View, error) {
	h := g.Head()
	if head != "" {
		i, ok := g.Lookup(head)
		if !ok {
			return nil, &HeadError{Dir: g.S.Dir, ID: head, Msg: "no such node"}
		}
		if g.Ref(i).Summary {
			return nil, &HeadError{Dir: g.S.Dir, ID: head, Msg: "is a summary node; render from a turn"}
		}
		h = i
	}
	v := &View{Graph: g, Head: h, Raw: raw, Substitution: dag.Substitution{Summary: -1}}
	if h < 0 {
		return v, nil
	}
	v.Indexes, v.Substitution = g.View(h, raw)
	return v, nil
}

// IDs returns the rendered ids, root first.
func (v *View) IDs() []string {
	out := make([]string, len(v.Indexes))
	for k, i := range v.Indexes {
		out[k] = v.Graph.ID(i)
	}
	return out
}

// Summarized reports whether the active summary substitutes in this view.
func (v *View) Summarized() bool { return v.Substitution.Summary >= 0 }

// Nodes reads the rendered nodes in order and passes each to fn.
func (v *View) Nodes(fn func(i int, n *transcript.Node) error) error {
	for _, i := range v.Indexes {
		n, err := v.Graph.S.Node(i)
		if err != nil {
			return err
		}
		if err := fn(i, n); err != nil {
			return err
		}
	}
	return nil
}

// LoadNodes reads every rendered node into memory.
func (v *View) LoadNodes() ([]*transcript.Node, error) {
	out := make([]*transcript.Node, 0, len(v.Indexes))
	err := v.Nodes(func(_ int, n *transcript.Node) error {
		out = append(out, n)
		return nil
	})
	return out, err
}

// Write writes the view in format f. Output is deterministic: the same
// session and head give the same bytes.
func Write(w io.Writer, v *View, f Format) error { return WriteStyled(w, v, f, Style{}) }

// Style decorates the text format for a terminal; the zero Style writes
// plain text, and the other formats are never styled. render chooses no
// colours itself: the caller (cmd, through report.Palette) does.
type Style struct {
	// Header styles one node's header line; label is system, user,
	// assistant, tool or summary.
	Header func(label, line string) string
}

// WriteStyled is Write with st applied to the text format.
func WriteStyled(w io.Writer, v *View, f Format, st Style) error {
	src := nodeSource{
		style: st,
		ids:   v.IDs,
		each: func(fn func(n *transcript.Node) error) error {
			return v.Nodes(func(_ int, n *transcript.Node) error { return fn(n) })
		},
		raw: func(fn func(raw []byte) error) error {
			for _, i := range v.Indexes {
				raw, err := v.Graph.S.RawLine(i)
				if err != nil {
					return err
				}
				if err := fn(raw); err != nil {
					return err
				}
			}
			return nil
		},
	}
	return write(w, src, f)
}

// WriteNodes writes nodes that are not (all) stored — a request-local view
// such as render --fit's — in format f, with the same conversion rules as
// Write. jsonl re-encodes each node.
func WriteNodes(w io.Writer, nodes []*transcript.Node, f Format) error {
	src := nodeSource{
		ids: func() []string {
			ids := make([]string, len(nodes))
			for k, n := range nodes {
				ids[k] = n.ID
			}
			return ids
		},
		each: func(fn func(n *transcript.Node) error) error {
			for _, n := range nodes {
				if err := fn(n); err != nil {
					return err
				}
			}
			return nil
		},
	}
	src.raw = func(fn func(raw []byte) error) error {
		return src.each(func(n *transcript.Node) error {
			raw, err := MarshalNoEscape(n)
			if err != nil {
				return err
			}
			return fn(raw)
		})
	}
	return write(w, src, f)
}

// nodeSource is what the format writers read: the rendered nodes in order,
// their ids, and their stored bytes (for jsonl).
type nodeSource struct {
	style Style
	ids   func() []string
	each  func(fn func(n *transcript.Node) error) error
	raw   func(fn func(raw []byte) error) error
}

func write(w io.Writer, src nodeSource, f Format) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var err error
	switch f {
	case FormatIDs:
		for _, id := range src.ids() {
			if _, err = fmt.Fprintln(bw, TextSafe(id)); err != nil {
				break
			}
		}
	case FormatJSONL:
		err = src.raw(func(raw []byte) error {
			bw.Write(raw)
			return bw.WriteByte('\n')
		})
	case FormatText:
		err = writeText(bw, src)
	case FormatOpenAI:
		err = writeOpenAI(bw, src)
	case FormatAnthropic:
		err = writeAnthropic(bw, src)
	case FormatResponses:
		err = writeResponses(bw, src)
	case FormatGemini:
		err = writeGemini(bw, src)
	default:
		err = fmt.Errorf("unknown format %q", f)
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

func writeText(w *bufio.Writer, src nodeSource) error {
	first := true
	return src.each(func(n *transcript.Node) error {
		if !first {
			w.WriteString("\n")
		}
		first = false
		label := string(n.Role)
		if n.IsSummary() {
			label = "summary"
		}
		header := fmt.Sprintf("── %s · %s", label, n.ID)
		if n.IsSummary() {
			header += fmt.Sprintf(" · covers %d nodes", n.CoverCount())
		}
		if n.ToolCallID != "" {
			header += " · result of " + n.ToolCallID
		}
		if n.Caller != "" {
			header += " · spawned by " + n.Caller
		}
		header = TextSafe(header)
		if src.style.Header != nil {
			header = src.style.Header(label, header)
		}
		w.WriteString(header + "\n")
		writeTextContent(w, n)
		return nil
	})
}

func writeTextContent(w *bufio.Writer, n *transcript.Node) {
	line := func(s string) {
		s = TextSafe(s)
		w.WriteString(s)
		if !strings.HasSuffix(s, "\n") {
			w.WriteString("\n")
		}
	}
	if !n.Content.IsBlocks {
		if n.Content.Text != "" {
			line(n.Content.Text)
		}
	} else {
		for _, b := range n.Content.Blocks {
			switch b.Type {
			case transcript.BlockText:
				line(b.Text)
			case transcript.BlockThinking:
				line("<thinking>\n" + strings.TrimSuffix(b.Text, "\n") + "\n</thinking>")
			case transcript.BlockImage:
				line(fmt.Sprintf("[image %s %s]", b.MediaType, b.Source))
			case transcript.BlockToolCall:
				line(fmt.Sprintf("→ %s %s  (call %s)", b.Name, transcript.ArgumentsText(b.Arguments), b.ID))
			case transcript.BlockToolResult:
				status := ""
				if b.IsError {
					status = " error"
				}
				line(fmt.Sprintf("← result%s of %s:", status, b.ToolCallID))
				if b.Text != "" {
					line(b.Text)
				}
			default:
				line(fmt.Sprintf("[%s block]", b.Type))
			}
		}
	}
	for _, c := range n.ToolCalls {
		line(fmt.Sprintf("→ %s %s  (call %s)", c.Name, c.ArgumentsText(), c.ID))
	}
}

// TextSafe makes transcript text safe to print for a person: content is
// untrusted (tool output, imported files), and on a terminal an ESC, OSC or
// CSI sequence in it would recolour, retitle or rewrite the screen, and a
// bidi control (U+202E) would make it read in another order than it is
// stored. C0 controls other than \n and \t, DEL and invalid bytes become
// \xNN, C1 controls \u00NN and bidi controls \uNNNN; everything else, line
// breaks included, is kept. It is the one neutraliser of every text output
// (render's text and ids, search, graph, the ids append and checkout print,
// errors and warnings); jsonl, openai, anthropic, responses, gemini and --json stay
// byte-exact.
func TextSafe(s string) string {
	i := 0
	for ; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\n' && c != '\t') || c >= 0x7f {
			break
		}
	}
	if i == len(s) {
		return s
	}
	const hexDigits = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' {
			b.WriteByte(c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r < 0x20, r == 0x7f:
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		case r >= 0x80 && r <= 0x9f, isBidiControl(r):
			b.WriteString(`\u`)
			for shift := 12; shift >= 0; shift -= 4 {
				b.WriteByte(hexDigits[(r>>shift)&0xf])
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isBidiControl reports the Unicode bidirectional formatting characters
// (UAX #9: embeddings, overrides, isolates and the marks), which reorder
// the text around them when it is displayed.
func isBidiControl(r rune) bool {
	switch {
	case r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
