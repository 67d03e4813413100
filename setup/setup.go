// Package setup owns `ctxfold setup` (docs/HOOKS.md): it merges ctxfold's
// status line, hooks and MCP server into a client's own settings files and
// takes exactly them out again. Every other key keeps its place and its
// value; a file it cannot parse is left untouched with an error naming the
// line; the old file is copied to NAME.ctxfold.bak before it is replaced
// (atomically, never through a symlink); a run that changes nothing writes
// nothing; a run holds setup's lock on the files' folders from plan to
// write, so two runs never interleave. Every value setup did not change
// keeps its bytes. A container of the user's it cannot merge into (hooks
// that are not an object, …) is an error, the file left as it is; a
// backup that holds something else is never overwritten. Uninstall
// restores the backup's bytes when removing ctxfold's entries gives back
// exactly the backed-up document, and otherwise writes the file without
// them. setup finds its entries again by the Marker argument it writes.
package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ctxfold/ctxfold/osfile"
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
	// Getenv reads the environment a client's folder may be named by
	// (CODEX_HOME, …); nil reads none.
	Getenv func(string) string
	// Archive makes the installed hook also archive the transcript
	// before the client compacts it (ctxfold hook --archive;
	// docs/ARCHIVE.md): every client's hook command comes from
	// hookLine.
	Archive bool
}

// hookLine is the hook command setup installs for sub ("hook",
// "hook --client Codex"), with --archive under Options.Archive.
func hookLine(o Options, sub string) string {
	if o.Archive {
		sub += " --archive"
	}
	return command(o.Command, sub)
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
	settings, mcp, err := claudePaths(o)
	if err != nil {
		return nil, err
	}
	a, err := plan(settings, o.Uninstall, func(obj *object) ([]string, error) {
		return mergeClaudeSettings(obj, o.Command, hookLine(o, "hook"), o.Uninstall, o.Scope == ScopeProject)
	})
	if err != nil {
		return nil, err
	}
	b, err := plan(mcp, o.Uninstall, func(obj *object) ([]string, error) {
		return mergeMCPServer(obj, o.Uninstall, claudeServer(o.Command))
	})
	if err != nil {
		return nil, err
	}
	return []*Change{a, b}, nil
}

func claudePaths(o Options) (settings, mcp string, err error) {
	switch o.Scope {
	case ScopeUser:
		return filepath.Join(o.Home, ".claude", "settings.json"), filepath.Join(o.Home, ".claude.json"), nil
	case ScopeProject:
		return filepath.Join(o.Project, ".claude", "settings.json"), filepath.Join(o.Project, ".mcp.json"), nil
	}
	return "", "", fmt.Errorf("unknown scope %q", o.Scope)
}

// readSettings reads the settings file at path for plan (exists false when
// there is none).
func readSettings(path string) (b []byte, fi fs.FileInfo, exists bool, err error) {
	fi, err = os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, false, nil
	case err != nil:
		return nil, nil, false, &FileError{path, err}
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, nil, false, &FileError{path, errors.New("is a symbolic link: ctxfold does not write through links; run setup on the file it points to, or edit it by hand (docs/HOOKS.md)")}
	case !fi.Mode().IsRegular():
		return nil, nil, false, &FileError{path, errors.New("not a regular file")}
	}
	if b, err = os.ReadFile(path); err != nil {
		return nil, nil, false, &FileError{path, err}
	}
	return b, fi, true, nil
}

// errReadOnly: setup does not replace a file its owner made read-only.
func errReadOnly(fi fs.FileInfo) error {
	return fmt.Errorf("is read-only (mode %04o): not changed; make it writable (chmod u+w) or edit it by hand", fi.Mode().Perm())
}

// plan reads path and applies merge to it in memory. A merge that changes
// nothing leaves the file as it is (an empty file stays empty).
func plan(path string, uninstall bool, merge func(*object) ([]string, error)) (*Change, error) {
	c := &Change{Path: path, Action: "unchanged"}
	var fi fs.FileInfo
	var err error
	if c.Before, fi, c.exists, err = readSettings(path); err != nil {
		return nil, err
	}
	if !c.exists && uninstall {
		return c, nil
	}
	obj := newObject()
	if len(bytes.TrimSpace(c.Before)) > 0 {
		if obj, err = parseObject(c.Before); err != nil {
			return nil, &FileError{path, fmt.Errorf("not valid JSON, left untouched: %w", err)}
		}
	}
	if c.Did, err = merge(obj); err != nil {
		return nil, &FileError{path, err}
	}
	if c.exists && !obj.changed {
		return c, nil // nothing of ours changed: not even re-indented
	}
	if c.exists && fi.Mode().Perm()&0o200 == 0 {
		return nil, &FileError{path, errReadOnly(fi)}
	}
	newline := !c.exists || bytes.HasSuffix(c.Before, []byte("\n"))
	c.After = format(obj, newline, len(c.Before))
	switch {
	case !c.exists:
		c.Action = "create"
	default:
		c.Action = "update"
		if c.Backup, err = backupPath(path, c.Before); err != nil {
			return nil, err
		}
	}
	if uninstall && c.exists && len(obj.keys) == 0 {
		if _, err := os.Lstat(path + BackupSuffix); errors.Is(err, fs.ErrNotExist) {
			c.Action, c.After, c.Backup = "remove", nil, "" // a file setup created
			return c, nil
		}
	}
	if uninstall && c.exists {
		if bak, err := os.ReadFile(path + BackupSuffix); err == nil && validJSON(bak) && sameJSON(bak, c.After) {
			c.After, c.Action, c.Backup = bak, "restore", ""
		}
	}
	return c, nil
}

func validJSON(b []byte) bool { return json.Unmarshal(b, &struct{}{}) == nil }

// backupPath is where the copy of path's current bytes goes: NAME.ctxfold.bak,
// unless that holds something else (the original an earlier install
// backed up), which is never overwritten: then the first NAME.ctxfold.bak.N
// that is free or holds the same bytes.
func backupPath(path string, before []byte) (string, error) {
	for n := 0; n < 1000; n++ {
		p := path + BackupSuffix
		if n > 0 {
			p += fmt.Sprintf(".%d", n)
		}
		same, err := fileHolds(p, before)
		if errors.Is(err, fs.ErrNotExist) || same {
			return p, nil
		}
	}
	return "", &FileError{path, errors.New("no free backup name (" + path + BackupSuffix + ".N up to 999 are taken)")}
}

// fileHolds reports whether the regular file at path holds exactly b,
// reading it in pieces (a settings file may be hundreds of MB).
func fileHolds(path string, b []byte) (bool, error) {
	f, err := osfile.OpenNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(len(b)) {
		return false, err
	}
	buf := make([]byte, 1<<20)
	for off := 0; ; {
		n, err := f.Read(buf)
		if !bytes.Equal(buf[:n], b[off:min(len(b), off+n)]) {
			return false, nil
		}
		off += n
		if err == io.EOF {
			return off == len(b), nil
		}
		if err != nil {
			return false, err
		}
	}
}

// Apply writes the planned changes: a backup of each file first, then the
// file replaced atomically. A file changed since it was planned is not
// overwritten, nor is one created since: a new file is created exclusively.
func Apply(changes []*Change) error {
	for _, c := range changes {
		if c.Action == "unchanged" {
			continue
		}
		if c.exists {
			if same, err := fileHolds(c.Path, c.Before); !same || err != nil {
				return &FileError{c.Path, errors.New("changed while setup ran; nothing written to it, run setup again")}
			}
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
		if c.Backup != "" {
			if err := writeAtomic(c.Backup, c.Before, perm, false); err != nil {
				return err
			}
		}
		if err := writeAtomic(c.Path, c.After, perm, !c.exists); err != nil {
			if !c.exists && errors.Is(err, fs.ErrExist) {
				return &FileError{c.Path, errors.New("created by another program while setup ran; nothing written to it, run setup again")}
			}
			return err
		}
	}
	return nil
}

func writeAtomic(path string, b []byte, perm fs.FileMode, create bool) error {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return &FileError{path, errors.New("not a regular file (a link?): not written")}
	}
	return store.WriteFileAtomic(path, store.AtomicOptions{Perm: perm, Sync: true, NoClobber: create}, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}
