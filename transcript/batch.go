package transcript

import (
	"bufio"
	"bytes"
	"io"
)

// ReadNodes parses a JSONL stream of nodes in the native schema (blank
// lines are skipped). name labels errors, which are *ParseError with the
// line number.
func ReadNodes(r io.Reader, name string, maxLine int) ([]Node, error) {
	nodes, _, err := ReadNodeLines(r, name, maxLine)
	return nodes, err
}

// ReadNodeLines is ReadNodes that also returns each node's 1-based line,
// so that a rejected batch node can be reported as file:line.
func ReadNodeLines(r io.Reader, name string, maxLine int) ([]Node, []int, error) {
	nodes, lines, _, err := ReadBatch(r, name, maxLine)
	return nodes, lines, err
}

// ReadBatch is ReadNodeLines that also says which nodes are explicit
// roots: in a batch an absent "predecessor" follows the node before (or
// HEAD), while "predecessor": null is a root, as in nodes.jsonl
// (docs/FORMAT.md §2), so a line copied from a session means the same.
// Pass roots as AppendOptions.Roots.
func ReadBatch(r io.Reader, name string, maxLine int) (nodes []Node, lines []int, roots []bool, err error) {
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes
	}
	br := bufio.NewReaderSize(r, 1<<16)
	var buf [16]member
	for line := 1; ; line++ {
		data, err := ReadLine(br, maxLine)
		if err != nil && err != io.EOF {
			return nil, nil, nil, &ParseError{File: name, Line: line, Msg: err.Error()}
		}
		body := bytes.TrimSpace(data)
		if len(body) > 0 {
			if pos := FirstInvalidUTF8(data); pos > 0 {
				return nil, nil, nil, &ParseError{File: name, Line: line, Msg: InvalidUTF8Msg(pos)}
			}
			var n Node
			if uerr := n.UnmarshalJSON(body); uerr != nil {
				return nil, nil, nil, &ParseError{File: name, Line: line, NodeID: n.ID, Msg: StripNodePrefix(uerr.Error(), n.ID)}
			}
			root := false
			if m, derr := decodeMembers(body, buf[:0]); derr == nil {
				raw, ok := m.get("predecessor")
				root = ok && string(bytes.TrimSpace(raw)) == "null"
			}
			nodes = append(nodes, n)
			lines = append(lines, line)
			roots = append(roots, root)
		}
		if err == io.EOF {
			return nodes, lines, roots, nil
		}
	}
}
