// Package projectprefix owns what a project's own sessions say about a
// fresh session's first request: before a session has recorded a request,
// the client's prior (docs/ACCURACY.md, "The prior") knows what the client
// sends by default, not what this user's setup adds — the project's
// CLAUDE.md, MCP tools, a SessionStart hook's output — which no transcript
// records. The newest earlier session of the same client in the same
// project recorded what its first request read; what that was beyond its
// transcript is what the fresh session's first request carries too
// (docs/ACCURACY.md, "The project's own sessions").
package projectprefix

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/store"
)

// Defaults of Options.
const (
	// DefaultCandidates is how many earlier sessions of the project are
	// imported at most before giving up: the newest one that recorded a
	// first request is the one taken.
	DefaultCandidates = 3
	// DefaultHeadBytes is how much of an earlier session is read: its
	// first request and the lines before it (a session's first request
	// is near its start; a first message larger than this is skipped).
	DefaultHeadBytes = 4 << 20
	// headPeek is how much of a file is read for its project (the first
	// "cwd" a client records).
	headPeek = 64 << 10
	// maxListed bounds the folder entries looked at: a client's project
	// folder with more sessions than this is read by its newest files'
	// names only as far as the listing goes.
	maxListed = 4096
	// maxExamined bounds the files whose project is read (headPeek each):
	// a Codex day folder holds other projects' sessions too.
	maxExamined = 32
)

// Target is the session whose first request is to be predicted.
type Target struct {
	// File is its transcript file.
	File string
	// Session is its cache session directory (live.Entry.Session).
	Session string
	// Format is the importer format its file was read as (live.Entry.Format).
	Format string
}

// Options say how earlier sessions are read and measured.
type Options struct {
	// Live reads an earlier session's head; its CacheDir is replaced by a
	// temporary one (the head is measured once and dropped, the user's
	// cache is not filled with copies of other sessions).
	Live live.Options
	// Session measures it, with the model the target is measured with.
	Session    estimate.SessionOptions
	Candidates int
	HeadBytes  int64
	// TempDir is where the temporary cache lives ("" for the system's).
	TempDir string
	// MemoDir is where the memo of earlier sessions' measures is kept
	// (the cache directory; "" for none: every call measures again).
	MemoDir string
}

// Learned is what the first request of the project's newest earlier
// session carried beside its transcript.
type Learned struct {
	// Tokens is that request's recorded input less the estimate of the
	// view it read (estimate.Calibration.FirstUnrecordedTokens).
	Tokens int `json:"tokens"`
	// From is that session's transcript file.
	From string `json:"from"`
	// Kind is a sub-agent's kind (claudecode.SubagentKinds), "" for a
	// main session.
	Kind string `json:"kind,omitempty"`
	// Users are the user's sessions in other projects whose median
	// Tokens is (user.go); none when From is of the project.
	Users []string `json:"users,omitempty"`
	// format is the importer format the sessions were read as, which
	// names their projects' folders (projectName).
	format string
}

// Method is the calibration method a result predicted from l names.
func (l Learned) Method() string {
	if len(l.Users) > 0 {
		return l.userMethod()
	}
	if l.Kind == forkKind {
		return fmt.Sprintf("%s: a fork of session %s, whose latest request before it read and wrote %d", estimate.MethodProject, filepath.Base(l.From), l.Tokens)
	}
	if l.Kind != "" {
		return fmt.Sprintf("%s: the first request of the project's %s sub-agent %s read %d beside its transcript", estimate.MethodProject, l.Kind, filepath.Base(l.From), l.Tokens)
	}
	return fmt.Sprintf("%s: the first request of the project's session %s read %d beside its transcript", estimate.MethodProject, filepath.Base(l.From), l.Tokens)
}

// Find looks for the newest earlier session beside t's file (the same
// folder, the same extension, the same recorded project, started no later
// than t's first recorded time, the same client and the same kind of
// session: main or sub-agent) whose first request was recorded, and
// returns what it carried beside its transcript (a Codex rollout looks in
// the day folders up to its own: codex.go); a Claude Code, pi or
// OpenClaw session or Codex rollout with none learns from the user's
// other projects (user.go). A Claude Code sub-agent file learns from the
// project's sub-agent files of its own kind instead (subagent.go). Any
// error is "none": the prior stands.
func Find(ctx context.Context, t Target, opts Options) (Learned, bool) {
	if !strings.HasSuffix(t.File, ".jsonl") {
		return Learned{}, false
	}
	tg := target{Target: t}
	tg.project, tg.start = headOf(t.File)
	switch sessionMode(t.Session, opts.Session.Open) {
	case estimate.PriorMain:
		candidates, users := siblings(t.File), []string(nil)
		switch t.Format {
		case importer.ClaudeCode, importer.Pi, importer.OpenClaw:
			users = userMainSessions(t.File, t.Format)
		case importer.Codex:
			if r := codexRollouts(t.File); r != nil {
				candidates, users = r, r
			}
		}
		if l, ok := findEarlier(ctx, tg, candidates, estimate.PriorMain, nil, opts); ok || len(users) == 0 {
			return l, ok
		}
		return findUsers(ctx, tg, users, estimate.PriorMain, nil, opts)
	case estimate.PriorSubagent:
		return findSubagent(ctx, tg, opts)
	}
	return Learned{}, false
}

// target is the session Find looks for, with its file's head read once
// (headOf): its project and when it started.
type target struct {
	Target
	project string
	start   time.Time
}

// findEarlier is Find over candidates, newest first: the first of the
// same project, started no later than t, of the kind same accepts (nil:
// any), whose first request in mode was recorded.
func findEarlier(ctx context.Context, t target, candidates []string, mode string, same func(string) bool, opts Options) (Learned, bool) {
	left := opts.Candidates
	if left <= 0 {
		left = DefaultCandidates
	}
	for k, sib := range candidates {
		if left == 0 || k == maxExamined || ctx.Err() != nil {
			break
		}
		// An earlier session: the same project, started before this one
		// (a file written later but started later is a later session,
		// which an old transcript measured now must not learn from).
		if p, s := headOf(sib); p != t.project || (!t.start.IsZero() && !s.IsZero() && s.After(t.start)) {
			continue
		}
		if same != nil && !same(sib) {
			continue
		}
		left--
		if n, ok := firstUnrecorded(ctx, sib, t.Format, mode, opts); ok {
			return Learned{Tokens: n, From: sib}, true
		}
	}
	return Learned{}, false
}

// Apply calibrates res, the target's result, with what Find learned, when
// res has no recorded request; it reports whether it did.
func Apply(ctx context.Context, t Target, res *estimate.Result, opts Options) bool {
	if res == nil || (res.Calibration != nil && res.Calibration.Anchor != estimate.MethodPrior) {
		return false
	}
	l, ok := Find(ctx, t, opts)
	return ok && res.WithProjectPrefix(l.Tokens, l.Method(), opts.Session.Estimate)
}

// siblings are the regular files beside file with its extension, newest
// first, file itself left out; symlinks are not followed.
func siblings(file string) []string {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil
	}
	ext := filepath.Ext(abs)
	return newestFirst(appendFiles(nil, filepath.Dir(abs), abs, func(name string) bool { return filepath.Ext(name) == ext }))
}

// headOf is the working directory the client recorded first in file (""
// when none: the sessions of one folder of Claude Code, pi or Qwen Code
// are one project's, Codex's folders are days) and the first time it
// recorded (zero when none or unreadable): when the session started.
func headOf(file string) (project string, start time.Time) {
	b, err := input.ReadHead(file, headPeek)
	if err != nil {
		return "", time.Time{}
	}
	start, _ = time.Parse(time.RFC3339Nano, input.FirstString(b, "timestamp", nil))
	return input.FirstString(b, "cwd", nil), start
}

// firstUnrecorded measures the head of sib (its lines up to HeadBytes) in
// a temporary cache and returns what its first request read beyond the
// view, when it recorded one and is a session of mode. With a MemoDir, a file
// measured before and unchanged since (size, modification time) is
// answered from the memo (memo.go).
func firstUnrecorded(ctx context.Context, sib, format, mode string, opts Options) (int, bool) {
	limit := opts.HeadBytes
	if limit <= 0 {
		limit = DefaultHeadBytes
	}
	if opts.MemoDir == "" {
		n, ok, _ := measureHead(ctx, sib, format, mode, opts, limit)
		return n, ok
	}
	abs, err := filepath.Abs(sib)
	st, serr := os.Lstat(sib)
	if err != nil || serr != nil || !st.Mode().IsRegular() {
		return 0, false
	}
	path, key := filepath.Join(opts.MemoDir, memoFile), memoKey(abs, format, mode, opts, limit)
	if e, ok := readMemo(path)[key]; ok && e.Size == st.Size() && e.ModTime == st.ModTime().UnixNano() {
		return e.Tokens, e.OK
	}
	n, ok, sure := measureHead(ctx, sib, format, mode, opts, limit)
	if sure && ctx.Err() == nil {
		writeMemo(path, key, memoEntry{Size: st.Size(), ModTime: st.ModTime().UnixNano(), Tokens: n, OK: ok})
	}
	return n, ok
}

// measureHead is firstUnrecorded's measure of sib's head, a session of
// mode (estimate.PriorMain or PriorSubagent); sure says the answer is the
// file's own (it was read and imported), not a failure to.
func measureHead(ctx context.Context, sib, format, mode string, opts Options, limit int64) (n int, ok, sure bool) {
	head, err := input.ReadHead(sib, limit+1)
	if err != nil {
		return 0, false, false
	}
	if len(head) == 0 {
		return 0, false, true
	}
	if int64(len(head)) > limit {
		cut := bytes.LastIndexByte(head[:limit], '\n')
		if cut < 0 {
			return 0, false, true
		}
		head = head[:cut+1]
	}
	tmp, err := os.MkdirTemp(opts.TempDir, "ctxfold-project-")
	if err != nil {
		return 0, false, false
	}
	defer os.RemoveAll(tmp)
	file := filepath.Join(tmp, filepath.Base(sib))
	if err := os.WriteFile(file, head, 0o600); err != nil {
		return 0, false, false
	}
	lo := opts.Live
	lo.CacheDir, lo.MaxBytes, lo.From, lo.Prepare, lo.Archive = filepath.Join(tmp, "cache"), -1, format, nil, false
	e, err := live.Open(ctx, file, lo)
	if err != nil {
		// Not a session of this format (or cut mid-record): its own
		// answer, unless the run was cancelled.
		return 0, false, ctx.Err() == nil
	}
	defer e.Close()
	if sessionMode(e.Session, opts.Session.Open) != mode {
		return 0, false, true
	}
	so := opts.Session
	so.Head = ""
	res := estimate.Session(ctx, e.Session, so)
	if res.Err != nil || res.Result == nil || res.Result.Calibration == nil {
		return 0, false, res.Err == nil && ctx.Err() == nil
	}
	c := res.Result.Calibration
	if c.Requests < 1 || c.FirstUnrecordedTokens <= 0 {
		return 0, false, true
	}
	return c.FirstUnrecordedTokens, true, true
}

// sessionMode is the prior mode of the session in dir (estimate.PriorMode
// of its first node), "" when it cannot be read.
func sessionMode(dir string, o store.OpenOptions) string {
	s, err := store.Open(dir, o)
	if err != nil {
		return ""
	}
	defer s.Close()
	if s.Len() == 0 {
		return ""
	}
	n, err := s.Node(0)
	if err != nil {
		return ""
	}
	return estimate.PriorMode(n)
}
