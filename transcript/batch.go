package transcript

import (
	"bufio"
	"bytes"
	"io"
	"unicode/utf8"
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
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes
	}
	br := bufio.NewReaderSize(r, 1<<16)
	var nodes []Node
	var lines []int
	for line := 1; ; line++ {
		data, err := readLine(br, maxLine)
		if err != nil && err != io.EOF {
			return nil, nil, &ParseError{File: name, Line: line, Msg: err.Error()}
		}
		body := bytes.TrimSpace(data)
		if len(body) > 0 {
			if !utf8.Valid(body) {
				return nil, nil, &ParseError{File: name, Line: line, Msg: "invalid UTF-8"}
			}
			var n Node
			if uerr := n.UnmarshalJSON(body); uerr != nil {
				return nil, nil, &ParseError{File: name, Line: line, NodeID: n.ID, Msg: stripNodePrefix(uerr.Error(), n.ID)}
			}
			nodes = append(nodes, n)
			lines = append(lines, line)
		}
		if err == io.EOF {
			return nodes, lines, nil
		}
	}
}
