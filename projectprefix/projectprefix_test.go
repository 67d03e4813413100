package projectprefix_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/projectprefix"
)

// recording is a real Claude Code 2.1.328 session (testdata/interop): its
// requests are recorded, its lines name the project /interop/work.
var recording = filepath.Join("..", "testdata", "interop", "claude-code", "2.1.328", "chat", "transcript", "00000000-0000-4000-8000-000000000001.jsonl")

// project is a folder as Claude Code keeps one (sessiontest.ProjectFolder)
// and, newer than both its sessions, a session of another project whose
// first request read 5,000 more.
type project struct {
	dir, earlier, fresh, other string
}

func newProject(t testing.TB) project {
	t.Helper()
	var p project
	p.dir, p.earlier, p.fresh = sessiontest.ProjectFolder(t, recording)
	b, err := os.ReadFile(recording)
	if err != nil {
		t.Fatal(err)
	}
	p.other = filepath.Join(p.dir, "00000000-0000-4000-8000-0000000000e1.jsonl")
	other := strings.ReplaceAll(string(b), `"cwd":"/interop/work"`, `"cwd":"/elsewhere"`)
	other = strings.Replace(other, `"input_tokens":`, `"input_tokens":5000`, 1)
	sessiontest.WriteAged(t, p.other, other, -30*time.Minute)
	return p
}

// measure reads file through a cache as `estimate FILE` does.
func measure(t *testing.T, file string) (projectprefix.Target, estimate.SessionOptions, *estimate.Result) {
	t.Helper()
	e, err := live.Open(context.Background(), file, live.Options{CacheDir: t.TempDir(), MaxBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	so := estimate.SessionOptions{Estimate: estimate.Options{Window: 200000, NodeDetail: true}}
	r := estimate.Session(context.Background(), e.Session, so)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	return projectprefix.Target{File: file, Session: e.Session, Format: e.Format}, so, r.Result
}

// firstUnrecorded is what the first request of file read beyond its view,
// from its own calibration's history.
func firstUnrecorded(t *testing.T, file string) int {
	t.Helper()
	_, _, r := measure(t, file)
	c := r.Calibration
	if c == nil || len(c.History) == 0 {
		t.Fatalf("%s: no recorded request", file)
	}
	return int(c.History[0].Measured) - c.History[0].Estimated
}

// A fresh session's first request takes what the first request of the
// project's newest earlier session carried beside its transcript — not
// the newer session of another project, not the client's prior.
func TestFreshSessionTakesTheProjectsEarlierSession(t *testing.T) {
	p := newProject(t)
	want := firstUnrecorded(t, p.earlier)
	if other := firstUnrecorded(t, p.other); other == want {
		t.Fatalf("the other project's session carried %d too: the test cannot tell them apart", other)
	}
	target, so, r := measure(t, p.fresh)
	if r.Calibration == nil || r.Calibration.Anchor != estimate.MethodPrior || r.Calibration.UnrecordedTokens == want {
		t.Fatalf("before: %+v, want the client's prior, not %d", r.Calibration, want)
	}
	if !projectprefix.Apply(context.Background(), target, r, projectprefix.Options{Session: so}) {
		t.Fatal("the project's earlier session was not taken")
	}
	c := r.Calibration
	if c.CalibratedTotal != r.Total+want || c.Anchor != estimate.MethodProject || !strings.HasPrefix(c.Method, estimate.MethodProject+": ") || !strings.Contains(c.Method, filepath.Base(p.earlier)) {
		t.Errorf("calibration %+v, want %d + %d from %s", c, r.Total, want, filepath.Base(p.earlier))
	}
	if r.BudgetBasis != estimate.BasisCalibrated || r.BudgetPct != c.CalibratedBudgetPct {
		t.Errorf("budget %.3f%% (%s), calibration's %.3f%%", r.BudgetPct, r.BudgetBasis, c.CalibratedBudgetPct)
	}
}

// A session that recorded a request keeps its own calibration.
func TestRecordedSessionKeepsItsCalibration(t *testing.T) {
	p := newProject(t)
	target, so, r := measure(t, p.earlier)
	before := *r.Calibration
	if projectprefix.Apply(context.Background(), target, r, projectprefix.Options{Session: so}) || r.Calibration.CalibratedTotal != before.CalibratedTotal {
		t.Errorf("a recorded session's calibration was replaced: %+v", r.Calibration)
	}
}

// A symlink beside the file is not followed, and a sub-agent file takes
// nothing from the folder.
func TestFindSkipsSymlinksAndSubagents(t *testing.T) {
	p := newProject(t)
	elsewhere := filepath.Join(t.TempDir(), "kept.jsonl")
	if err := os.Rename(p.earlier, elsewhere); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, p.earlier); err != nil {
		t.Fatal(err)
	}
	target, so, _ := measure(t, p.fresh)
	if l, ok := projectprefix.Find(context.Background(), target, projectprefix.Options{Session: so}); ok {
		t.Errorf("took %+v through a symlink", l)
	}
	if err := os.Remove(p.earlier); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(elsewhere, p.earlier); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p.fresh)
	if err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(p.dir, "agent-a1.jsonl")
	sessiontest.WriteAged(t, sub, strings.ReplaceAll(string(b), `"isSidechain":false`, `"isSidechain":true`), 0)
	target, so, _ = measure(t, sub)
	if l, ok := projectprefix.Find(context.Background(), target, projectprefix.Options{Session: so}); ok {
		t.Errorf("a sub-agent file took %+v", l)
	}
}

// BenchmarkApplyBesideAnEarlierSession is what a fresh session's first
// estimate pays for the lookup (docs/BENCHMARKS.md): a folder of 30
// sessions of another project and one of its own, the earlier session's
// head imported and measured once per run.
func BenchmarkApplyBesideAnEarlierSession(b *testing.B) {
	p := newProject(b)
	other, err := os.ReadFile(p.other)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 30 {
		if err := os.WriteFile(filepath.Join(p.dir, fmt.Sprintf("other-%02d.jsonl", i)), other, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	e, err := live.Open(context.Background(), p.fresh, live.Options{CacheDir: b.TempDir(), MaxBytes: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	so := estimate.SessionOptions{Estimate: estimate.Options{Window: 200000}}
	target := projectprefix.Target{File: p.fresh, Session: e.Session, Format: e.Format}
	for _, memo := range []bool{false, true} {
		name, opts := "measured", projectprefix.Options{Session: so, Candidates: 3}
		if memo {
			// The status line's case: called again before the first reply,
			// the earlier session answered from the memo.
			name, opts.MemoDir = "memoised", b.TempDir()
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				r := estimate.Session(context.Background(), e.Session, so)
				if r.Err != nil || !projectprefix.Apply(context.Background(), target, r.Result, opts) {
					b.Fatalf("not applied: %v", r.Err)
				}
			}
		})
	}
}

// With a memo directory, an earlier session measured once is answered from
// the memo while it is unchanged — its bytes replaced behind the same size
// and time, the memo's figure stands — and measured again once it changes.
func TestFindMemoisesUnchangedSessions(t *testing.T) {
	p := newProject(t)
	want := firstUnrecorded(t, p.earlier)
	target, so, _ := measure(t, p.fresh)
	opts := projectprefix.Options{Session: so, MemoDir: t.TempDir()}
	if l, ok := projectprefix.Find(context.Background(), target, opts); !ok || l.Tokens != want {
		t.Fatalf("first lookup: %+v %v, want %d", l, ok, want)
	}
	st, err := os.Stat(p.earlier)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p.earlier)
	if err != nil {
		t.Fatal(err)
	}
	// The same length, another first request: only a measure sees it.
	at := strings.Index(string(b), `"input_tokens":`) + len(`"input_tokens":`)
	digit := byte('9')
	if b[at] == '9' {
		digit = '8'
	}
	changed := string(b[:at]) + string(digit) + string(b[at+1:])
	if err := os.WriteFile(p.earlier, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p.earlier, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if l, ok := projectprefix.Find(context.Background(), target, opts); !ok || l.Tokens != want {
		t.Errorf("unchanged size and time: %+v %v, want the memo's %d", l, ok, want)
	}
	if l, _ := projectprefix.Find(context.Background(), target, projectprefix.Options{Session: so}); l.Tokens == want {
		t.Fatalf("without the memo the edited file measures %d as before: the test cannot tell", l.Tokens)
	}
	// A memo another build wrote (other import or counting rules) is not
	// answered from.
	memo := filepath.Join(opts.MemoDir, "project-prefix.json")
	var doc map[string]json.RawMessage
	if b, err := os.ReadFile(memo); err != nil || json.Unmarshal(b, &doc) != nil || doc["rules"] == nil {
		t.Fatalf("memo %s: %v, no rules", memo, err)
	}
	doc["rules"] = json.RawMessage(`"an older build's"`)
	older, _ := json.Marshal(doc)
	if err := os.WriteFile(memo, older, 0o600); err != nil {
		t.Fatal(err)
	}
	if l, ok := projectprefix.Find(context.Background(), target, opts); !ok || l.Tokens == want {
		t.Errorf("a memo of other rules: %+v %v, want the file measured again", l, ok)
	}
	later := st.ModTime().Add(time.Minute)
	if err := os.Chtimes(p.earlier, later, later); err != nil {
		t.Fatal(err)
	}
	if l, ok := projectprefix.Find(context.Background(), target, opts); !ok || l.Tokens == want {
		t.Errorf("a changed file: %+v %v, want it measured again", l, ok)
	}
}

// A session of the project that started after the target is no earlier
// session, though its file is the newest beside it: an old transcript
// measured now does not learn from what came later.
func TestFindSkipsLaterSessions(t *testing.T) {
	p := newProject(t)
	b, err := os.ReadFile(p.earlier)
	if err != nil {
		t.Fatal(err)
	}
	// The same session moved a year on: it started after the fresh one.
	later := strings.ReplaceAll(string(b), `"timestamp":"2026-`, `"timestamp":"2027-`)
	if later == string(b) {
		t.Fatal("the recording's timestamps are not of 2026")
	}
	sessiontest.WriteAged(t, p.earlier, later, -time.Hour)
	target, so, _ := measure(t, p.fresh)
	if l, ok := projectprefix.Find(context.Background(), target, projectprefix.Options{Session: so}); ok {
		t.Errorf("learned from a session that started later: %+v", l)
	}
}
