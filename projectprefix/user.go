package projectprefix

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/importer"
)

// The user's other projects (docs/ACCURACY.md, "The user's other
// projects"): a project's first session has no earlier session of its
// project to learn from, but most of what the user's setup adds to a
// first request is the user's, not the project's — the global CLAUDE.md,
// the user's MCP servers, plugins and hooks — and Claude Code keeps every
// project's sessions in one folder of the user's (<config>/projects/<project>/).
// A session with no earlier session of its project takes the median of
// what the first requests of the user's newest earlier sessions in other
// projects carried beside their transcripts: one project's CLAUDE.md or a
// large git status weighs less in a median of three than alone. A user
// who works in several git worktrees of one repository (one project
// folder each) is the common case this answers. Where a client keeps its
// projects is its format's to say (importer.UserProjects): pi keeps them
// the same way, and OpenClaw one folder per agent, whose first session
// takes the user's other agents'.
const (
	// maxUserProjects bounds the other project folders listed, the most
	// recently changed first.
	maxUserProjects = 16
	// userSessions is how many of the user's sessions the median is of.
	userSessions = 3
)

// userProjects are the other project folders beside project, a folder of
// format's client's projects (importer.UserProjects), the most recently
// changed first (at most maxUserProjects); none when project is not such
// a folder. Symlinks are not followed.
func userProjects(project, format string) []string {
	root, sub, ok := importer.UserProjects(format, project)
	if !ok {
		return nil
	}
	entries, _ := readDir(root)
	var dirs []cand
	for _, e := range entries {
		p := filepath.Join(root, e.Name(), sub)
		if p == project || !e.IsDir() {
			continue
		}
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			dirs = append(dirs, cand{p, fi.ModTime().UnixNano()})
		}
	}
	out := newestFirst(dirs)
	return out[:min(len(out), maxUserProjects)]
}

// userMainSessions are the main session files of the user's other
// projects (userProjects of file's folder), newest first.
func userMainSessions(file, format string) []string {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil
	}
	var out []cand
	for _, p := range userProjects(filepath.Dir(abs), format) {
		out = appendFiles(out, p, abs, func(name string) bool { return filepath.Ext(name) == ".jsonl" })
	}
	return newestFirst(out)
}

// findUsers is what the user's sessions among candidates (newest first)
// carried beside their transcripts: the median over the userSessions
// started last before t (of the kind same accepts, nil: any) whose first
// request in mode was recorded. Only the newest maxExamined candidates'
// heads are read, and, when they hold fewer than userSessions earlier
// sessions, the newest maxExamined of the rest last written before t
// started.
func findUsers(ctx context.Context, t target, candidates []string, mode string, same func(string) bool, opts Options) (Learned, bool) {
	start := t.start
	type earlier struct {
		path  string
		start time.Time
	}
	var found []earlier
	examine := func(files []string) {
		for _, c := range files {
			if ctx.Err() != nil {
				return
			}
			_, s := headOf(c)
			if s.IsZero() || (!start.IsZero() && s.After(start)) || (same != nil && !same(c)) {
				continue
			}
			found = append(found, earlier{c, s})
		}
	}
	examine(candidates[:min(len(candidates), maxExamined)])
	if len(found) < userSessions && !start.IsZero() && len(candidates) > maxExamined {
		// A session measured long after it ran: the newest files are later
		// sessions. The files last written before it started are earlier
		// ones; the newest of them are read too.
		examine(writtenBefore(candidates[maxExamined:], start, maxExamined))
	}
	// The order they started in: a file's modification time is when it
	// was last written, which an old session resumed today makes recent.
	sort.SliceStable(found, func(i, j int) bool { return found[i].start.After(found[j].start) })
	var tokens []int
	var from []string
	for k, e := range found {
		if len(tokens) == userSessions || k == 2*userSessions || ctx.Err() != nil {
			break
		}
		if n, ok := firstUnrecorded(ctx, e.path, t.Format, mode, opts); ok {
			tokens, from = append(tokens, n), append(from, e.path)
		}
	}
	if len(tokens) == 0 {
		return Learned{}, false
	}
	sorted := append([]int(nil), tokens...)
	sort.Ints(sorted)
	return Learned{Tokens: sorted[(len(sorted)-1)/2], From: from[0], Users: from, format: t.Format}, true
}

// writtenBefore is the first n of files (newest first) last written
// before t; symlinks are not followed.
func writtenBefore(files []string, t time.Time, n int) []string {
	var out []string
	for _, f := range files {
		if len(out) == n {
			break
		}
		if fi, err := os.Lstat(f); err == nil && fi.ModTime().Before(t) {
			out = append(out, f)
		}
	}
	return out
}

// userMethod is Learned.Method for what the user's other projects said.
func (l Learned) userMethod() string {
	names := make([]string, len(l.Users))
	for i, f := range l.Users {
		names[i] = filepath.Join(projectName(f, l.format), filepath.Base(f))
	}
	what := "session"
	if l.Kind != "" {
		what = l.Kind + " sub-agent"
	}
	if len(names) == 1 {
		return fmt.Sprintf("%s: the first request of the user's %s %s in another project read %d beside its transcript", estimate.MethodProject, what, names[0], l.Tokens)
	}
	return fmt.Sprintf("%s: the first requests of the user's %ss %s in other projects read a median of %d beside their transcripts", estimate.MethodProject, what, strings.Join(names, ", "), l.Tokens)
}

// projectName is the name of the project folder file is in, at any depth
// (a sub-agent's file is in its session's folder), as format's client
// keeps its projects (importer.UserProjects); "" for none (a Codex
// rollout: its name says enough).
func projectName(file, format string) string {
	for dir := filepath.Dir(file); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if root, _, ok := importer.UserProjects(format, dir); ok {
			if rel, err := filepath.Rel(root, dir); err == nil {
				return strings.Split(filepath.ToSlash(rel), "/")[0]
			}
		}
	}
	return ""
}
