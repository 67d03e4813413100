package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
)

// An own file is one setup writes whole (a plugin or extension the client
// loads from its folder, docs/HOOKS.md): nothing of the user's is in it,
// so it is recognised by its first line (ownHeader), replaced when an
// older setup wrote it, and removed on uninstall. A file of that name
// setup did not write is never touched.
const ownHeader = "// ctxfold "

// ownVersion is the version of the plugins and extensions setup writes:
// the first line names it, and an install replaces a file of another.
const ownVersion = "v1"

// reOwnCommand finds the ctxfold command an own file runs (the
// `const CTXFOLD = "…";` line every template holds).
var reOwnCommand = regexp.MustCompile(`(?m)^const CTXFOLD = ("(?:[^"\\]|\\.)*");$`)

// planOwnFile plans writing content to path (or removing setup's file
// there, on uninstall).
func planOwnFile(path string, content []byte, uninstall bool, what string) (*Change, error) {
	c := &Change{Path: path, Action: "unchanged"}
	var err error
	if c.Before, _, c.exists, err = readSettings(path); err != nil {
		return nil, err
	}
	ours := bytes.HasPrefix(c.Before, []byte(ownHeader))
	switch {
	case !c.exists && uninstall:
		return c, nil
	case !c.exists:
		c.Action, c.After, c.Did = "create", content, []string{"added the " + what}
	case !ours && uninstall:
		c.Did = []string{"kept " + path + ": setup did not write it"}
	case !ours:
		return nil, &FileError{path, errors.New("holds a file setup did not write: left untouched (move it away, then run setup again)")}
	case uninstall:
		c.Action, c.Did = "remove", []string{"removed the " + what}
	case !bytes.Equal(c.Before, content):
		c.Action, c.After, c.Did = "update", content, []string{"updated the " + what}
	}
	return c, nil
}

// readOwnCommand is the command the own file at path runs, when setup
// wrote it.
func readOwnCommand(path string) (string, bool) {
	b, err := readIfPresent(path)
	if err != nil || !bytes.HasPrefix(b, []byte(ownHeader)) {
		return "", false
	}
	m := reOwnCommand.FindSubmatch(b)
	var bin string
	if m == nil || json.Unmarshal(m[1], &bin) != nil || bin == "" {
		return "", false
	}
	return bin, true
}

// readIfPresent reads a regular file (nil when there is none).
func readIfPresent(path string) ([]byte, error) {
	b, _, exists, err := readSettings(path)
	if !exists {
		return nil, err
	}
	return b, err
}

func errUnknownScope(s Scope) error { return fmt.Errorf("unknown scope %q", s) }
