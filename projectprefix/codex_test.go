package projectprefix_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/projectprefix"
)

// codexRecording is a real Codex 0.169.0 rollout (testdata/interop): its
// first request read 9,526 as recorded, its lines name /interop/work.
var codexRecording = filepath.Join("..", "testdata", "interop", "codex", "0.169.0", "chat", "rollout-2026-01-01T00-00-00-00000000-0000-7000-8000-000000000001.jsonl")

// codexSessions is a Codex sessions folder (YYYY/MM/DD/rollout-…):
// rollouts is what to write, by their start ("2026-02-19T10-00-00"), each
// with its project and how much more than the recording its first request
// read; the fresh rollout of project fresh started at start, cut before
// its first reply. It returns the fresh rollout and the others by start.
func codexSessions(t *testing.T, rollouts map[string][2]string, start, fresh string) (string, map[string]string) {
	t.Helper()
	b, err := os.ReadFile(codexRecording)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "sessions")
	write := func(at, project, content string) string {
		// 2026-02-19T10-00-00 → 2026/02/19, and the timestamps it records.
		day := filepath.Join(at[:4], at[5:7], at[8:10])
		path := filepath.Join(root, day, "rollout-"+at+"-00000000-0000-7000-8000-000000000001.jsonl")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		stamp := at[:10] + "T" + strings.ReplaceAll(at[11:], "-", ":")
		content = strings.ReplaceAll(content, `"timestamp":"2026-01-01T00:00:00`, `"timestamp":"`+stamp)
		content = strings.ReplaceAll(content, `"cwd":"/interop/work"`, `"cwd":"/`+project+`"`)
		sessiontest.WriteAged(t, path, content, 0)
		return path
	}
	others := map[string]string{}
	for at, r := range rollouts {
		more, err := strconv.Atoi(r[1])
		if err != nil {
			t.Fatal(err)
		}
		others[at] = write(at, r[0], strings.ReplaceAll(string(b), `"input_tokens":9526,`, `"input_tokens":`+strconv.Itoa(9526+more)+`,`))
	}
	return write(start, fresh, sessiontest.HeadBefore(string(b), `"role":"assistant"`)), others
}

// A rollout with no earlier rollout of its project that day takes its
// project's newest earlier one of a day before — not another project's
// of the same day, not a later one.
func TestCodexRolloutTakesItsProjectsEarlierDay(t *testing.T) {
	fresh, others := codexSessions(t, map[string][2]string{
		"2026-02-18T09-00-00": {"a", "1000"},
		"2026-02-19T10-00-00": {"a", "3000"},
		"2026-02-20T08-00-00": {"b", "8000"},
		"2026-02-21T08-00-00": {"a", "20000"},
	}, "2026-02-20T09-00-00", "a")
	want := firstUnrecorded(t, others["2026-02-19T10-00-00"])
	target, so, _ := measure(t, fresh)
	l, ok := projectprefix.Find(context.Background(), target, projectprefix.Options{Session: so})
	if !ok || l.Tokens != want || l.From != others["2026-02-19T10-00-00"] || len(l.Users) != 0 {
		t.Errorf("took %+v %v, want %d from yesterday's rollout of the project", l, ok, want)
	}
}

// A rollout whose project has no earlier rollout takes the median of the
// user's three newest earlier rollouts of other projects; a rollout
// outside a YYYY/MM/DD folder looks beside itself only.
func TestCodexRolloutTakesTheUsersOtherProjects(t *testing.T) {
	fresh, others := codexSessions(t, map[string][2]string{
		"2026-02-17T09-00-00": {"a", "1000"},
		"2026-02-18T09-00-00": {"b", "20000"},
		"2026-02-19T10-00-00": {"a", "3000"},
		"2026-02-20T08-00-00": {"b", "8000"},
	}, "2026-02-20T09-00-00", "c")
	want := firstUnrecorded(t, others["2026-02-20T08-00-00"]) // the median of 3,000, 8,000 and 20,000
	target, so, _ := measure(t, fresh)
	l, ok := projectprefix.Find(context.Background(), target, projectprefix.Options{Session: so})
	if !ok || l.Tokens != want || len(l.Users) != 3 || strings.Contains(strings.Join(l.Users, " "), "2026-02-17") {
		t.Fatalf("took %+v %v, want the median %d of the three newest", l, ok, want)
	}
	if m := l.Method(); !strings.Contains(m, "other projects") || !strings.Contains(m, "rollout-2026-02-20T08-00-00") {
		t.Errorf("method %q", m)
	}

	flat := filepath.Join(t.TempDir(), "rollouts", filepath.Base(fresh))
	if err := os.MkdirAll(filepath.Dir(flat), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(fresh)
	if err != nil {
		t.Fatal(err)
	}
	sessiontest.WriteAged(t, flat, string(b), -time.Minute)
	target, so, _ = measure(t, flat)
	if l, ok := projectprefix.Find(context.Background(), target, projectprefix.Options{Session: so}); ok {
		t.Errorf("a rollout alone in a folder took %+v", l)
	}
}
