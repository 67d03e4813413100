package droid_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeSession writes a Droid session file named by its id into dir: its
// session_start (naming parent when not "") and the given records.
func writeSession(t *testing.T, dir, id, parent string, records ...string) string {
	t.Helper()
	start := fmt.Sprintf(`{"type":"session_start","id":%q,"title":"t","owner":"unknown","version":2,"cwd":"/work/app"`, id)
	if parent != "" {
		start += fmt.Sprintf(`,"parent":%q`, parent)
	}
	path := filepath.Join(dir, id+".jsonl")
	if err := os.WriteFile(path, []byte(start+"}\n"+strings.Join(records, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func msg(id, parent, role, text string) string {
	p := ""
	if parent != "" {
		p = fmt.Sprintf(`"parentId":%q,`, parent)
	}
	return fmt.Sprintf(`{"type":"message","id":%q,%s"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":%q,"content":[{"type":"text","text":%q}]}}`, id, p, role, text)
}

func userOnly(id, parent string) string {
	return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%q,"message":{"role":"user","content":[{"type":"text","text":"hook ran"}],"visibility":"user_only"}}`, id, parent)
}

// manual is a manual compaction's record: no anchor, removedCount as
// Droid counted what it loaded.
func manual(id string, removed int, summary string) string {
	return fmt.Sprintf(`{"type":"compaction_state","id":%q,"timestamp":"2026-01-01T00:01:00.000Z","summaryText":%q,"summaryKind":"llm_summary","removedCount":%d,"systemInfoText":"info"}`, id, summary, removed)
}

// TestParentChain: a session a manual compaction started imports its
// parents' messages first (the oldest first), each manual compaction
// covering every message before it (the parent's file holds the folded
// turns; removedCount counts what Droid loaded, which need not be the
// nodes imported: a user_only message is none), then its own; the parents' files are
// reported attached, with no warning.
func TestParentChain(t *testing.T) {
	d := t.TempDir()
	writeSession(t, d, "s1", "", msg("u1", "", "user", "Plant: the port is 8443."), msg("a1", "u1", "assistant", "Noted."),
		userOnly("h1", "a1"), msg("u2", "h1", "user", "Second."), msg("a2", "u2", "assistant", "Two."))
	writeSession(t, d, "s2", "s1", manual("c1", 5, "First summary."), msg("u3", "", "user", "Third."), msg("a3", "u3", "assistant", "Three."))
	child := writeSession(t, d, "s3", "s2", manual("c2", 2, "Second summary."), msg("u4", "", "user", "Fourth."), msg("a4", "u4", "assistant", "Four."))
	c := load(t, child)
	if len(c.Warnings) != 0 {
		t.Errorf("warnings %q", c.Warnings)
	}
	if c.Name != "s3" || c.Head != "a4" {
		t.Errorf("name %q head %q, want s3 and a4", c.Name, c.Head)
	}
	if want := []string{filepath.Join(d, "s1.jsonl"), filepath.Join(d, "s2.jsonl")}; !slices.Equal(c.Attached, want) {
		t.Errorf("attached %q, want %q", c.Attached, want)
	}
	var ids, covers []string
	for _, n := range c.Nodes {
		ids = append(ids, n.ID)
		if n.IsSummary() {
			covers = append(covers, strings.Join(c.Covers(n), " "))
		}
	}
	if want := []string{"u1", "a1", "u2", "a2", "summary_c1", "u3", "a3", "summary_c2", "u4", "a4"}; !slices.Equal(ids, want) {
		t.Errorf("nodes %q, want %q", ids, want)
	}
	if want := []string{"u1 a1 u2 a2", "u1 a1 u2 a2 u3 a3"}; !slices.Equal(covers, want) {
		t.Errorf("summaries cover %q, want %q", covers, want)
	}
	for _, n := range c.Nodes {
		if n.ID == "u3" && n.Predecessor != "a2" || n.ID == "u4" && n.Predecessor != "a3" {
			t.Errorf("%s follows %q: the new session's first message follows the parent's last", n.ID, n.Predecessor)
		}
	}
}

// TestParentChainBroken: a missing parent, a loop, a parent id that is a
// path and a chain past the limit each end the chain with a warning that
// says so, and what exists is imported.
func TestParentChainBroken(t *testing.T) {
	d := t.TempDir()
	t.Run("missing", func(t *testing.T) {
		c := load(t, writeSession(t, d, "m2", "m1", manual("c", 2, "S."), msg("u", "", "user", "After.")))
		want := filepath.Join(d, "m1.jsonl")
		if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], `parent "m1" has no file (looked for `+want) || !slices.Equal(c.Missing, []string{want}) {
			t.Errorf("warnings %q, missing %q", c.Warnings, c.Missing)
		}
		if len(c.Nodes) != 1 || c.Nodes[0].ID != "u" {
			t.Errorf("%d nodes, want the session's own message", len(c.Nodes))
		}
	})
	t.Run("loop", func(t *testing.T) {
		writeSession(t, d, "l1", "l2", manual("c0", 1, "S."), msg("x1", "", "user", "One."))
		c := load(t, writeSession(t, d, "l2", "l1", manual("c", 1, "S."), msg("x2", "", "user", "Two.")))
		if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "a parent loop") || len(c.Nodes) != 3 {
			t.Errorf("warnings %q, %d nodes (want x1, the summary, x2)", c.Warnings, len(c.Nodes))
		}
	})
	t.Run("path", func(t *testing.T) {
		c := load(t, writeSession(t, d, "p1", "../p0", manual("c", 1, "S."), msg("y", "", "user", "One.")))
		if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "is not a session id") {
			t.Errorf("warnings %q", c.Warnings)
		}
	})
	t.Run("depth", func(t *testing.T) {
		prev := ""
		var last string
		for i := range 70 {
			id := fmt.Sprintf("d%02d", i)
			last = writeSession(t, d, id, prev, manual("c"+id, 1, "S."), msg("q"+id, "", "user", "Turn "+id+"."))
			prev = id
		}
		c := load(t, last)
		// 65 files' messages and the 64 summaries of the files after the
		// oldest imported (the first one's summary covers nothing).
		if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "past the 64 parents followed") || len(c.Nodes) != 65+64 {
			t.Errorf("warnings %q, %d nodes (want 129)", c.Warnings, len(c.Nodes))
		}
	})
}

// A fork (Droid's --fork, a rewind) names its source as parent but copies
// the source's messages into its own file: it is imported alone, once
// each, with no warning. A parent in another folder of the sessions
// directory (Droid looks sessions up by id in every project's folder) is
// found there.
func TestParentForkAndElsewhere(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "-work-a"), filepath.Join(root, "-work-b")
	for _, d := range []string{a, b} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeSession(t, a, "f1", "", msg("u1", "", "user", "One."), msg("a1", "u1", "assistant", "Done."))
	fork := load(t, writeSession(t, a, "f2", "f1", msg("u1", "", "user", "One."), msg("a1", "u1", "assistant", "Done."), msg("u2", "a1", "user", "Two.")))
	if len(fork.Warnings) != 0 || len(fork.Nodes) != 3 || len(fork.Attached) != 0 {
		t.Errorf("fork: warnings %q, %d nodes (want its own 3), attached %q", fork.Warnings, len(fork.Nodes), fork.Attached)
	}
	moved := load(t, writeSession(t, b, "f3", "f1", manual("c", 2, "S."), msg("u3", "", "user", "Three.")))
	if want := filepath.Join(a, "f1.jsonl"); len(moved.Warnings) != 0 || len(moved.Nodes) != 4 || !slices.Equal(moved.Attached, []string{want}) {
		t.Errorf("parent elsewhere: warnings %q, %d nodes (want u1 a1, the summary, u3), attached %q", moved.Warnings, len(moved.Nodes), moved.Attached)
	}
}
