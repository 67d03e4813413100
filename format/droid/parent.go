package droid

// This file follows a session's parent chain: Droid's manual compaction
// (/compact; droid.compact_session in its JSON-RPC protocol) writes its
// summary into a new session file whose session_start names the old
// session as "parent", beside it in the same sessions folder, and which
// holds only the compaction_state (no anchor) before the new turns. The
// folded turns are in the parent's file, so the parent's messages are
// imported first, into the child's conversation, and the child's first
// compaction_state covers all of them (docs/INTEROP-droid.md, "The manual
// compaction").

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// maxParents bounds the chain followed: one manual compaction adds one
// link, and a chain this long is far past any real session.
const maxParents = 64

// parentFile is where Droid keeps the session id it names as a parent:
// <id>.jsonl in the child's folder (Droid writes the new session into the
// folder of the old one's working directory), else in another folder of
// the sessions directory (Droid looks a session up by id in every
// project's folder: a session whose working directory changed). "" for
// an id that is no plain file name.
func parentFile(child, id string) string {
	if id == "" || id != filepath.Base(id) || strings.ContainsAny(id, `/\*?[`) || id == "." || id == ".." {
		return ""
	}
	beside := filepath.Join(filepath.Dir(child), id+".jsonl")
	if _, err := os.Lstat(beside); err == nil {
		return beside
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(filepath.Dir(child)), "*", id+".jsonl")); len(m) == 1 {
		return m[0]
	}
	return beside
}

// compacted reports whether a session's first record after session_start
// is a compaction_state: the layout of the session Droid's manual
// compaction starts. A fork (--fork, a rewind) names its source as parent
// too, but copies the source's messages into its own file: its parent is
// not followed, or its turns would come twice.
func compacted(second string) bool { return second == "compaction_state" }

// parentChain lists the files of start's ancestors, the oldest first. A
// missing or unreadable parent, one that is not the session it should
// be, a loop or a chain over maxParents ends the chain with a warning:
// what was found is imported.
func (s *session) parentChain(file string, start record) []string {
	var chain []string
	seen := map[string]bool{start.ID: true}
	fr, _ := s.sink.(transcript.FileReporter)
	for cur, at := start, file; cur.Parent != "" && compacted(cur.second); {
		warn := func(msg string) {
			s.sink.Warn(at, 1, fmt.Sprintf("session %s: parent %q %s; its turns are not imported", cur.ID, cur.Parent, msg))
		}
		if len(chain) == maxParents {
			warn(fmt.Sprintf("is past the %d parents followed", maxParents))
			break
		}
		if seen[cur.Parent] {
			warn("is already in the chain (a parent loop)")
			break
		}
		p := parentFile(at, cur.Parent)
		if p == "" {
			warn("is not a session id")
			break
		}
		next, err := readStart(p)
		if errors.Is(err, os.ErrNotExist) {
			if fr != nil {
				fr.MissingFile(p)
			}
			warn("has no file (looked for " + p + ")")
			break
		}
		if err != nil {
			warn("could not be read: " + err.Error())
			break
		}
		if next.ID != cur.Parent {
			warn(fmt.Sprintf("is in %s, whose session_start names %q", p, next.ID))
			break
		}
		seen[next.ID] = true
		chain = append(chain, p)
		cur, at = next, p
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	return chain
}

// readStart reads a session file's session_start record, with the type
// of the record after it in second.
func readStart(file string) (record, error) {
	f, err := os.Open(file)
	if err != nil {
		return record{}, err
	}
	defer f.Close()
	lines := input.NewLines(f, file, input.Options{})
	raw, err := lines.Next()
	if errors.Is(err, io.EOF) {
		return record{}, fmt.Errorf("%s is empty", file)
	} else if err != nil {
		return record{}, err
	}
	var start record
	if err := lines.Unmarshal(raw, &start, "a session_start record"); err != nil {
		return record{}, err
	}
	if start.Type != "session_start" {
		return record{}, fmt.Errorf("%s starts with a %q record, not session_start", file, start.Type)
	}
	if raw, err := lines.Next(); err == nil {
		var next struct {
			Type string `json:"type"`
		}
		_ = input.Unmarshal(raw, &next)
		start.second = next.Type
	}
	return start, nil
}

// importParents imports the messages of each file of the chain, the
// oldest first, into the conversation; a file's first compaction_state,
// when it is its first record, is a manual compaction folding everything
// before it.
func (s *session) importParents(ctx context.Context, chain []string, opts Options) error {
	fr, _ := s.sink.(transcript.FileReporter)
	for _, p := range chain {
		if err := s.importParent(ctx, p, opts); err != nil {
			return err
		}
		if fr != nil {
			fr.AttachedFile(p)
		}
	}
	return nil
}

func (s *session) importParent(ctx context.Context, file string, opts Options) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	lines := input.NewLines(f, file, opts)
	if _, err := lines.Next(); err != nil { // session_start, read by parentChain
		return err
	}
	s.file = file
	s.sink.Count("session_start", transcript.OutcomeMerged, "a parent session's metadata (the session a manual compaction continued from)")
	raw, err := lines.Next()
	if errors.Is(err, io.EOF) {
		return nil
	} else if err != nil {
		return err
	}
	var r record
	if err := lines.Unmarshal(raw, &r, "a session record"); err != nil {
		return err
	}
	// A file that starts with a compaction_state was started by a manual
	// compaction: it folds everything before it (what was found of its
	// own parents, if any).
	s.manual = compacted(r.Type)
	if err := s.record(r, lines); err != nil {
		return err
	}
	return s.records(ctx, lines)
}

// records imports every record after session_start.
func (s *session) records(ctx context.Context, lines *input.Lines) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		raw, err := lines.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		var r record
		if err := lines.Unmarshal(raw, &r, "a session record"); err != nil {
			return err
		}
		if err := s.record(r, lines); err != nil {
			return err
		}
	}
}
