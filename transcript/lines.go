package transcript

// Line reading shared by the store's index and batch input: one reader
// with one limit, so a long line is the same error everywhere.

import (
	"bufio"
	"errors"
	"fmt"
)

// DefaultMaxLineBytes bounds one line of nodes.jsonl or events.jsonl. A
// longer line is a clear error, never an out-of-memory.
const DefaultMaxLineBytes = 16 << 20

// stripNodePrefix drops the "node <id>: " a decode error already starts
// with, so that an error message names the node once.
func StripNodePrefix(msg, id string) string {
	prefix := fmt.Sprintf("node %q: ", id)
	if len(msg) > len(prefix) && msg[:len(prefix)] == prefix {
		return msg[len(prefix):]
	}
	return msg
}

var ErrLineTooLong = errors.New("line is longer than the limit")

// readLine returns one line including its newline; io.EOF with the last
// unterminated bytes.
func ReadLine(r *bufio.Reader, max int) ([]byte, error) {
	var out []byte
	for {
		chunk, err := r.ReadSlice('\n')
		out = append(out, chunk...)
		if len(out) > max+1 {
			return nil, fmt.Errorf("%w (%d bytes)", ErrLineTooLong, max)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return out, err
	}
}
