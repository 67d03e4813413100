// Package report owns how results reach people and scripts: the IO streams
// with TTY and colour detection, the one JSON helper (schema_version, sorted
// keys), tables, and user-facing messages. It formats what the other
// packages compute; it never reads sessions, renders views or counts
// tokens, and never touches os.Std* (cmd/ hands it the streams).
package report

import (
	"bytes"
	"io"
	"strings"
)

// IOStreams carries the standard streams and what is known about them.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	StdoutTTY bool
	StderrTTY bool
	// ColorMode is auto, always or never (--color).
	ColorMode string
	// NoColorEnv is true when NO_COLOR is set or TERM=dumb.
	NoColorEnv bool
	// TerminalWidth is the width of stdout on a TTY, 0 otherwise.
	TerminalWidth int
	// JSON is set when --json is in effect: no progress output then.
	JSON bool
}

// ColorEnabled: colour only on a TTY, never with NO_COLOR or TERM=dumb,
// unless --color=always.
func (s *IOStreams) ColorEnabled() bool {
	switch s.ColorMode {
	case "always":
		return true
	case "never":
		return false
	}
	return s.StdoutTTY && !s.NoColorEnv
}

// ProgressEnabled: progress goes to stderr only when it is a terminal.
// Never with --json: a script reading the output wants no decoration.
func (s *IOStreams) ProgressEnabled() bool { return s.StderrTTY && !s.JSON }

// Test returns streams backed by buffers, not a terminal.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut, ColorMode: "auto"}, in, out, errOut
}

// NoColorFromEnv interprets NO_COLOR and TERM the way https://no-color.org
// asks: any non-empty NO_COLOR disables colour.
func NoColorFromEnv(getenv func(string) string) bool {
	return getenv("NO_COLOR") != "" || strings.EqualFold(getenv("TERM"), "dumb")
}
