package transcript

import (
	"fmt"
)

// ParseError is input that cannot be read: a malformed line, a bad meta
// file, a line over the size limit. File is relative to the session
// directory's parent when known; Line is 1-based, 0 when not applicable.
type ParseError struct {
	File   string
	Line   int
	NodeID string
	Msg    string
	// Err is the I/O error when the file could not be read at all (as
	// opposed to content that does not parse); nil otherwise.
	Err error
}

func (e *ParseError) Unwrap() error { return e.Err }

func (e *ParseError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.NodeID != "" {
		return fmt.Sprintf("%s: node %q: %s", loc, e.NodeID, e.Msg)
	}
	return fmt.Sprintf("%s: %s", loc, e.Msg)
}
