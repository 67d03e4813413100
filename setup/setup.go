// Package setup owns `ctxfold setup` (docs/HOOKS.md): it merges ctxfold's
// status line, hooks and MCP server into a client's own settings files and
// takes exactly them out again. Every other key keeps its place and its
// value; a file it cannot parse is left untouched with an error naming the
// line; the old file is copied to NAME.ctxfold.bak before it is replaced
// (atomically, never through a symlink); a run that changes nothing writes
// nothing. Uninstall restores the backup's bytes when removing ctxfold's
// entries gives back exactly the backed-up document, and otherwise writes
// the file without them, re-indented as Claude Code writes it.
package setup

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ctxfold/ctxfold/store"
)

// Scope is where the entries go.
type Scope string

const (
	// ScopeUser is the user's own configuration (~/.claude/settings.json,
	// ~/.claude.json).
	ScopeUser Scope = "user"
	// ScopeProject is the project's (.claude/settings.json, .mcp.json).
	ScopeProject Scope = "project"
)

// Options configure a plan.
type Options struct {
	Scope Scope
	// Home is the user's home, Project the project directory.
	Home, Project string
	// Command is how the client runs ctxfold ("ctxfold" on PATH, or an
	// absolute path).
	Command   string
	Uninstall bool
}

// Change is one file's planned change.
type Change struct {
	Path string `json:"path"`
	// Action is "create", "update", "unchanged", "restore" (uninstall
	// giving back the backed-up bytes) or "remove" (uninstall of a file
	// setup created, left empty).
	Action string `json:"action"`
	// Did says what changed, in words.
	Did    []string `json:"did"`
	Backup string   `json:"backup,omitempty"`
	Before []byte   `json:"-"`
	After  []byte   `json:"-"`
	exists bool
}

// BackupSuffix names the copy of a file taken before it is replaced.
const BackupSuffix = ".ctxfold.bak"

// FileError is a settings file setup cannot change.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// ClaudeCode plans the changes to Claude Code's files. Nothing is written.
func ClaudeCode(o Options) ([]*Change, error) {
	if o.Command == "" {
		o.Command = "ctxfold"
	}
	var settings, mcp string
	switch o.Scope {
	case ScopeUser:
		settings, mcp = filepath.Join(o.Home, ".claude", "settings.json"), filepath.Join(o.Home, ".claude.json")
	case ScopeProject:
		settings, mcp = filepath.Join(o.Project, ".claude", "settings.json"), filepath.Join(o.Project, ".mcp.json")
	default:
		return nil, fmt.Errorf("unknown scope %q", o.Scope)
	}
	a, err := plan(settings, o.Uninstall, func(obj *object) []string {
		return mergeClaudeSettings(obj, o.Command, o.Uninstall, o.Scope == ScopeProject)
	})
	if err != nil {
		return nil, err
	}
	b, err := plan(mcp, o.Uninstall, func(obj *object) []string {
		return mergeMCPServer(obj, o.Command, o.Uninstall, claudeServer(o.Command))
	})
	if err != nil {
		return nil, err
	}
	return []*Change{a, b}, nil
}

// plan reads path and applies merge to it in memory.
func plan(path string, uninstall bool, merge func(*object) []string) (*Change, error) {
	c := &Change{Path: path, Action: "unchanged"}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if uninstall {
			return c, nil
		}
	case err != nil:
		return nil, &FileError{path, err}
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, &FileError{path, errors.New("is a symbolic link: ctxfold does not write through links; run setup on the file it points to, or edit it by hand (docs/HOOKS.md)")}
	case !fi.Mode().IsRegular():
		return nil, &FileError{path, errors.New("not a regular file")}
	default:
		c.exists = true
		if c.Before, err = os.ReadFile(path); err != nil {
			return nil, &FileError{path, err}
		}
	}
	obj := newObject()
	if len(bytes.TrimSpace(c.Before)) > 0 {
		if obj, err = parseObject(c.Before); err != nil {
			return nil, &FileError{path, fmt.Errorf("not valid JSON, left untouched: %w", err)}
		}
	}
	c.Did = merge(obj)
	newline := !c.exists || bytes.HasSuffix(c.Before, []byte("\n"))
	c.After = format(obj.raw(), newline)
	if c.exists && sameJSON(c.After, c.Before) {
		c.After = c.Before // nothing of ours changed: not even re-indented
	}
	switch {
	case bytes.Equal(c.After, c.Before) && c.exists:
		return c, nil
	case !c.exists:
		c.Action = "create"
	default:
		c.Action = "update"
		c.Backup = path + BackupSuffix
	}
	if uninstall && c.exists && sameJSON(c.After, []byte("{}")) {
		if _, err := os.Lstat(path + BackupSuffix); errors.Is(err, fs.ErrNotExist) {
			c.Action, c.After, c.Backup = "remove", nil, "" // a file setup created
			return c, nil
		}
	}
	if uninstall && c.exists {
		if bak, err := os.ReadFile(c.Backup); err == nil && sameJSON(bak, c.After) {
			c.After, c.Action, c.Backup = bak, "restore", ""
		}
	}
	return c, nil
}

// Apply writes the planned changes: a backup of each file first, then the
// file replaced atomically. A file changed since it was planned is not
// overwritten.
func Apply(changes []*Change) error {
	for _, c := range changes {
		if c.Action == "unchanged" {
			continue
		}
		now, err := os.ReadFile(c.Path)
		if c.exists && (err != nil || !bytes.Equal(now, c.Before)) {
			return &FileError{c.Path, errors.New("changed while setup ran; nothing written to it, run setup again")}
		}
		if c.Action == "remove" {
			if err := os.Remove(c.Path); err != nil {
				return &FileError{c.Path, err}
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(c.Path), 0o755); err != nil {
			return &FileError{c.Path, err}
		}
		perm := fs.FileMode(0o644)
		if fi, err := os.Lstat(c.Path); err == nil {
			perm = fi.Mode().Perm()
		}
		if c.exists && c.Action != "restore" {
			if err := writeAtomic(c.Path+BackupSuffix, c.Before, perm); err != nil {
				return err
			}
		}
		if err := writeAtomic(c.Path, c.After, perm); err != nil {
			return err
		}
	}
	return nil
}

func writeAtomic(path string, b []byte, perm fs.FileMode) error {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return &FileError{path, errors.New("not a regular file (a link?): not written")}
	}
	return store.WriteFileAtomic(path, store.AtomicOptions{Perm: perm, Sync: true}, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}
