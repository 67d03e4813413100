package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// droidRecorded is Factory Droid 0.215.0's own session file of a tool
// call, a turn reporting a large usage, its automatic compaction (no hook
// runs for it) and one more turn (docs/INTEROP-droid.md).
var droidRecorded = filepath.Join("..", "testdata", "interop", "droid", "0.215.0", "compaction",
	"29e4292f-253f-4c40-8c1a-1fc839f464a2.jsonl")

func runDroid(t *testing.T, event, file, cache string) *Result {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"hook_event_name": event, "transcript_path": file,
		"session_id": "29e4292f-253f-4c40-8c1a-1fc839f464a2", "tool_name": "Execute"})
	in, err := ParseAs(DialectOf("droid"), b)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), in, Options{CacheDir: cache, Client: "Droid"})
	if err != nil {
		t.Fatalf("%s: %v", event, err)
	}
	return res
}

// Droid runs no hook around its automatic compaction: a PostToolUse (or
// UserPromptSubmit) after it finds the record in the transcript's new
// lines and injects what the summary dropped, once; before it, nothing is
// read twice and nothing printed.
func TestUnannouncedCompactionFoundByProbe(t *testing.T) {
	dir := t.TempDir()
	file, cache := filepath.Join(dir, "s.jsonl"), filepath.Join(dir, "cache")
	full, err := os.ReadFile(droidRecorded)
	if err != nil {
		t.Fatal(err)
	}
	// The recording's compaction folds only its first message (Droid
	// keeps the last ~12,000 tokens verbatim); made to fold all seven
	// messages before it, as Droid writes that (the anchor is the last
	// message removed), it drops the first turn's request and command.
	full = bytes.Replace(full, []byte(`"anchorMessage":{"id":"context-2a8f1c21-4bd8-4289-a664-0cb3e69d71ef","index":0},"removedCount":1,`),
		[]byte(`"anchorMessage":{"id":"93f7d91b-de23-48a7-8470-394da0dbd558","index":6},"removedCount":7,`), 1)
	i := bytes.Index(full, compactionMark)
	if i < 0 {
		t.Fatalf("%s: no compaction record", droidRecorded)
	}
	// The record cut in the middle: a probe must not skip past its line.
	half := i + len(compactionMark)/2
	if err := os.WriteFile(file, full[:half], 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runDroid(t, "PostToolUse", file, cache); r.Output != nil || r.Update != "" {
		t.Fatalf("a tool hook before any compaction imported or printed: %+v", r)
	}
	st := loadState(statePath(cache, file), file)
	if st.Pending || st.Scanned != int64(i) {
		t.Fatalf("after the first probe: pending %v, scanned %d, want %d (the start of the unfinished line)", st.Pending, st.Scanned, i)
	}
	if err := os.WriteFile(file, full, 0o644); err != nil {
		t.Fatal(err)
	}
	r := runDroid(t, "PostToolUse", file, cache)
	if r.Injected == nil || r.Output == nil {
		t.Fatalf("no injection after the compaction record appeared: %+v %+v", r, r.Injected)
	}
	if event, ctx := hookContext(t, r.Output); event != "PostToolUse" || !strings.Contains(ctx, "First turn. [[shell: echo before compaction]]") {
		t.Fatalf("output %s", r.Output)
	}
	if again := runDroid(t, "UserPromptSubmit", file, cache); again.Output != nil || again.Update != "" {
		t.Fatalf("the same compaction was injected again, or the transcript re-read: %+v", again)
	}
}

// Claude Code's dialect announces its compactions: its tool hooks do
// nothing, and a prompt with nothing pending reads nothing.
func TestAnnouncedDialectDoesNotProbe(t *testing.T) {
	dir := t.TempDir()
	file, cache := filepath.Join(dir, "s.jsonl"), filepath.Join(dir, "cache")
	full, err := os.ReadFile(droidRecorded)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, full, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []string{"PostToolUse", "UserPromptSubmit"} {
		if r := run(t, ev, "", file, cache); r.Output != nil || r.Update != "" {
			t.Fatalf("%s in Claude Code's dialect read or printed: %+v", ev, r)
		}
	}
	if _, err := os.Stat(statePath(cache, file)); err == nil {
		t.Fatal("Claude Code's dialect wrote probe state")
	}
}

// The probe reads only a regular file: a transcript that is a FIFO (or a
// link to a device) is an error, returned at once, never a wait.
func TestProbeRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "s.jsonl")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Skip(err)
	}
	if _, _, err := scanTail(link, 0); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a link to /dev/zero: %v", err)
	}
}

// A compaction record longer than the probe's buffer is found once its
// line is complete, not before; a line that merely holds the mark inside
// is no record.
func TestProbeLongLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	other := `{"type":"message","text":"` + string(compactionMark) + `"}` + "\n"
	record := string(compactionMark) + `,"summaryText":"` + strings.Repeat("x", 3*probeChunk) + `"}`
	if err := os.WriteFile(path, []byte(other+record), 0o644); err != nil {
		t.Fatal(err)
	}
	end, found, err := scanTail(path, 0)
	if err != nil || found || end != int64(len(other)) {
		t.Fatalf("unfinished record: end %d found %v err %v; want end %d, not found", end, found, err, len(other))
	}
	if err := os.WriteFile(path, []byte(other+record+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	end, found, err = scanTail(path, end)
	if err != nil || !found || end != int64(len(other)+len(record)+1) {
		t.Fatalf("complete record: end %d found %v err %v", end, found, err)
	}
	if _, found, _ = scanTail(path, end); found {
		t.Fatal("nothing new, yet found")
	}
}

// droidManual is Droid 0.215.0's manual compaction (/compact, through its
// JSON-RPC protocol): the new session's file, which names the old one as
// its parent and holds the summary, beside the old one's, which holds the
// folded turns (docs/INTEROP-droid.md).
var droidManual = filepath.Join("..", "testdata", "interop", "droid", "0.215.0", "compaction-manual")

// After a manual compaction the next prompt's UserPromptSubmit, in the new
// session, finds its compaction record, audits the summary against the
// parent's turns it folded (format/droid follows the parent) and injects
// what it dropped, once.
func TestManualCompactionFollowsParent(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	files, _ := filepath.Glob(filepath.Join(droidManual, "*-*.jsonl"))
	var child string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(dir, filepath.Base(f))
		if first, _, _ := bytes.Cut(data, []byte("\n")); bytes.Contains(first, []byte(`"parent":"`)) {
			// The new session as the next prompt finds it: its
			// session_start and the compaction record, before the turn.
			i := bytes.Index(data, compactionMark)
			data = data[:i+bytes.IndexByte(data[i:], '\n')+1]
			child = to
		}
		if err := os.WriteFile(to, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if child == "" || len(files) != 2 {
		t.Fatalf("%s: want a session and the one its manual compaction started", droidManual)
	}
	r := runDroid(t, "UserPromptSubmit", child, cache)
	if r.Injected == nil || r.Output == nil {
		t.Fatalf("no injection after the manual compaction: %+v", r)
	}
	if event, ctx := hookContext(t, r.Output); event != "UserPromptSubmit" || !strings.Contains(ctx, "First turn. [[shell: echo before manual compaction]]") {
		t.Fatalf("output %s", r.Output)
	}
	t.Logf("injected: %+v", r.Injected)
	if again := runDroid(t, "UserPromptSubmit", child, cache); again.Output != nil {
		t.Fatalf("the same compaction was injected again: %+v", again)
	}
}
