package projectprefix_test

import (
	"context"
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

// userFolder is a folder of a user's projects as Claude Code keeps it
// (<config>/projects/<project>/): a fresh session alone in project p0, and
// in p1…p4 one session each that started on 1…4 December, before it,
// whose first requests read 1,000, 3,000, 8,000 and 20,000 more than the
// recording's — their files written in the reverse order (the oldest
// session resumed last) — and in p5 a session that started after it.
type userFolder struct {
	root, fresh string
	earlier     []string // p1…p4
}

func newUserFolder(t *testing.T, name string) userFolder {
	t.Helper()
	b, err := os.ReadFile(recording)
	if err != nil {
		t.Fatal(err)
	}
	u := userFolder{root: filepath.Join(t.TempDir(), name)}
	write := func(project, file, content string, age time.Duration) string {
		dir := filepath.Join(u.root, project)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, file)
		sessiontest.WriteAged(t, path, strings.ReplaceAll(content, `"cwd":"/interop/work"`, `"cwd":"/`+project+`"`), age)
		return path
	}
	session := func(more, start string) string {
		s := strings.Replace(string(b), `"input_tokens":`, `"input_tokens":`+more, 1)
		return strings.ReplaceAll(s, `"timestamp":"2026-01-01T`, `"timestamp":"`+start+`T`)
	}
	for k, more := range []string{"1000", "3000", "8000", "20000"} {
		u.earlier = append(u.earlier, write(fmt.Sprintf("p%d", k+1), filepath.Base(recording), session(more, fmt.Sprintf("2025-12-0%d", k+1)), -time.Duration(k+3)*time.Hour))
	}
	write("p5", filepath.Base(recording), session("50000", "2026-02-01"), 0)
	u.fresh = write("p0", "00000000-0000-4000-8000-0000000000f1.jsonl", sessiontest.HeadBefore(string(b), `"type":"assistant"`), 0)
	return u
}

// A fresh session of a project with no earlier session of its own takes
// the median of what the first requests of the user's three sessions in
// other projects that started last before it carried beside their
// transcripts — in the order they started, not their files' — and says
// which.
func TestFreshProjectTakesTheUsersOtherProjects(t *testing.T) {
	u := newUserFolder(t, "projects")
	// p4, p3 and p2 started last: their median is p3's.
	want := firstUnrecorded(t, u.earlier[2])
	target, so, r := measure(t, u.fresh)
	if !projectprefix.Apply(context.Background(), target, r, projectprefix.Options{Session: so}) {
		t.Fatal("the user's other projects were not taken")
	}
	c := r.Calibration
	if c.CalibratedTotal != r.Total+want || c.Anchor != estimate.MethodProject {
		t.Errorf("calibration %+v, want %d + %d", c, r.Total, want)
	}
	for k, in := range []bool{false, true, true, true} {
		name := filepath.Join("p"+fmt.Sprint(k+1), filepath.Base(recording))
		if strings.Contains(c.Method, name) != in {
			t.Errorf("method %q: names %s %v, want %v", c.Method, name, !in, in)
		}
	}
	if !strings.Contains(c.Method, "other projects") || strings.Contains(c.Method, "p5") {
		t.Errorf("method %q", c.Method)
	}
}

// The project's own earlier session comes first; a folder that is not
// Claude Code's projects folder is not a user's, and its other folders
// are not looked in.
func TestUsersOtherProjectsOnlyWithoutTheProjectsOwn(t *testing.T) {
	u := newUserFolder(t, "projects")
	b, err := os.ReadFile(u.earlier[0])
	if err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(filepath.Dir(u.fresh), "00000000-0000-4000-8000-0000000000e0.jsonl")
	sessiontest.WriteAged(t, own, strings.ReplaceAll(string(b), `"cwd":"/p1"`, `"cwd":"/p0"`), -time.Hour)
	target, so, _ := measure(t, u.fresh)
	if l, ok := projectprefix.Find(context.Background(), target, projectprefix.Options{Session: so}); !ok || l.From != own || len(l.Users) != 0 {
		t.Errorf("took %+v, want the project's own session %s", l, own)
	}

	elsewhere := newUserFolder(t, "archive")
	target, so, _ = measure(t, elsewhere.fresh)
	if l, ok := projectprefix.Find(context.Background(), target, projectprefix.Options{Session: so}); ok {
		t.Errorf("took %+v from folders beside a folder not named projects", l)
	}
}

// A sub-agent whose project has no earlier sub-agent of its kind takes the
// user's sub-agent of its kind in another project — not the newer one of
// another kind.
func TestSubagentTakesTheUsersSubagentOfItsKind(t *testing.T) {
	p := newSubProject(t, `{"agentType":"Explore"}`, `{"agentType":"Plan"}`, `{"agentType":"Explore"}`)
	want := firstUnrecorded(t, p.older)
	root := filepath.Join(t.TempDir(), "projects")
	if err := os.MkdirAll(filepath.Join(root, "pB"), 0o755); err != nil {
		t.Fatal(err)
	}
	pA := filepath.Join(root, "pA")
	for _, mv := range [][2]string{{p.dir, pA}, {filepath.Join(pA, "s2"), filepath.Join(root, "pB", "s2")}, {filepath.Join(pA, "s2.jsonl"), filepath.Join(root, "pB", "s2.jsonl")}} {
		if err := os.Rename(mv[0], mv[1]); err != nil {
			t.Fatal(err)
		}
	}
	fresh := filepath.Join(root, "pB", "s2", "subagents", filepath.Base(p.fresh))
	target, so, _ := measure(t, fresh)
	l, ok := projectprefix.Find(context.Background(), target, projectprefix.Options{Session: so})
	if !ok || l.Tokens != want || l.Kind != "Explore/" || len(l.Users) != 1 || filepath.Base(l.Users[0]) != "agent-a1.jsonl" {
		t.Fatalf("took %+v %v, want %d from the user's Explore sub-agent agent-a1.jsonl", l, ok, want)
	}
	if m := l.Method(); !strings.Contains(m, "the user's Explore/ sub-agent") || !strings.Contains(m, filepath.Join("pA", "agent-a1.jsonl")+" in another project") {
		t.Errorf("method %q", m)
	}
}

// BenchmarkApplyFromTheUsersProjects is what a fresh project's first
// estimate pays for the user's other projects (docs/BENCHMARKS.md): a
// projects folder of 20 other projects of 10 sessions each (16 listed,
// the newest 32 files' heads read for their start), three of them
// imported and measured, or answered from the memo.
func BenchmarkApplyFromTheUsersProjects(b *testing.B) {
	rec, err := os.ReadFile(recording)
	if err != nil {
		b.Fatal(err)
	}
	root := filepath.Join(b.TempDir(), "projects")
	for p := range 20 {
		dir := filepath.Join(root, fmt.Sprintf("p%02d", p))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		content := strings.ReplaceAll(string(rec), `"cwd":"/interop/work"`, fmt.Sprintf(`"cwd":"/p%02d"`, p))
		content = strings.ReplaceAll(content, `"timestamp":"2026-01-01T`, `"timestamp":"2025-12-01T`)
		for s := range 10 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("s%02d.jsonl", s)), []byte(content), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	fresh := filepath.Join(root, "fresh", "f.jsonl")
	if err := os.MkdirAll(filepath.Dir(fresh), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(fresh, []byte(sessiontest.HeadBefore(string(rec), `"type":"assistant"`)), 0o644); err != nil {
		b.Fatal(err)
	}
	e, err := live.Open(context.Background(), fresh, live.Options{CacheDir: b.TempDir(), MaxBytes: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	so := estimate.SessionOptions{Estimate: estimate.Options{Window: 200000}}
	target := projectprefix.Target{File: fresh, Session: e.Session, Format: e.Format}
	for _, memo := range []bool{false, true} {
		name, opts := "measured", projectprefix.Options{Session: so}
		if memo {
			name, opts.MemoDir = "memoised", b.TempDir()
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				r := estimate.Session(context.Background(), e.Session, so)
				if r.Err != nil || !projectprefix.Apply(context.Background(), target, r.Result, opts) || !strings.Contains(r.Result.Calibration.Method, "other projects") {
					b.Fatalf("not applied from the user's projects: %v", r.Err)
				}
			}
		})
	}
}

// piRecording is a real pi 0.73.1 session (testdata/interop): its requests
// are recorded; OpenClaw writes its sessions in pi's format.
var piRecording = filepath.Join("..", "testdata", "interop", "pi", "0.73.1", "chat", "session.jsonl")

// pi keeps a folder per project under its sessions folder, OpenClaw a
// sessions folder per agent under its agents folder: a first session of
// its project (agent) takes the median of what the first requests of the
// user's three newest earlier sessions in the others carried — also when
// the newest files are later sessions (a session measured long after it
// ran) — and names them; a folder laid out neither way is not looked in.
func TestPiAndOpenClawTakeTheUsersOtherProjects(t *testing.T) {
	b, err := os.ReadFile(piRecording)
	if err != nil {
		t.Fatal(err)
	}
	session := func(more, start string) string {
		s := strings.Replace(string(b), `"usage":{"input":`, `"usage":{"input":`+more, 1)
		return strings.ReplaceAll(s, `"timestamp":"2026-12-06T`, `"timestamp":"`+start+`T`)
	}
	for _, layout := range []struct {
		name, sub string
		looked    bool
	}{
		{"sessions", "", true},           // pi: sessions/<project>/
		{"agents", "sessions", true},     // OpenClaw: agents/<agent>/sessions/
		{"archive", "", false},           // neither
		{"agents", "transcripts", false}, // an agents folder without sessions/
	} {
		root := filepath.Join(t.TempDir(), layout.name)
		write := func(project, file, content string, age time.Duration) string {
			dir := filepath.Join(root, project, layout.sub)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, file)
			sessiontest.WriteAged(t, path, strings.ReplaceAll(content, `"cwd":"/tmp/ctxfold-pi/chat/work"`, `"cwd":"/`+project+`"`), age)
			return path
		}
		// Each file last written the day its session ran.
		var earlier []string
		for k, more := range []string{"1000", "3000", "8000", "20000"} {
			ran := time.Until(time.Date(2025, 12, k+1, 15, 0, 0, 0, time.UTC))
			earlier = append(earlier, write(fmt.Sprintf("p%d", k+1), "s.jsonl", session(more, fmt.Sprintf("2025-12-0%d", k+1)), ran))
		}
		// More sessions that started after it, written since, than the
		// newest files read.
		for k := range 40 {
			ran := time.Until(time.Date(2026, 12, 7, 15, k, 0, 0, time.UTC))
			write(fmt.Sprintf("p%d", 5+k%4), fmt.Sprintf("s%d.jsonl", k), session("50000", "2026-12-07"), ran)
		}
		fresh := write("p0", "f.jsonl", sessiontest.HeadBefore(string(b), `"role":"assistant"`), 0)
		target, so, r := measure(t, fresh)
		applied := projectprefix.Apply(context.Background(), target, r, projectprefix.Options{Session: so})
		if applied != layout.looked {
			t.Errorf("%s/…/%s: applied %v, want %v (method %q)", layout.name, layout.sub, applied, layout.looked, r.Calibration.Method)
			continue
		}
		if !applied {
			continue
		}
		// p4, p3 and p2 started last before it: their median is p3's.
		if c := r.Calibration; c.CalibratedTotal != r.Total+firstUnrecorded(t, earlier[2]) || !strings.Contains(c.Method, "p3/s.jsonl") || strings.Contains(c.Method, "p1/") || strings.Contains(c.Method, "p5/") {
			t.Errorf("%s: calibration %+v, want p2–p4's median, p3's %d", layout.name, c, firstUnrecorded(t, earlier[2]))
		}
	}
}
