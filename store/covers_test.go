package store_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// chain appends n user/assistant nodes c0…c(n-1) after HEAD and returns
// their ids.
func chain(t *testing.T, dir string, from, n int) []string {
	t.Helper()
	nodes := make([]transcript.Node, n)
	ids := make([]string, n)
	for k := range nodes {
		ids[k] = fmt.Sprintf("c%d", from+k)
		if (from+k)%2 == 0 {
			nodes[k] = user(ids[k], "", "question")
		} else {
			nodes[k] = asst(ids[k], "", "answer")
		}
	}
	mustAppend(t, dir, store.AppendOptions{}, nodes...)
	return ids
}

func summaryLines(t *testing.T, dir string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, store.NodesFile))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, line := range bytes.Split(data, []byte("\n")) {
		if bytes.Contains(line, []byte(`"compaction":true`)) {
			out = append(out, line)
		}
	}
	return out
}

// docs/FORMAT.md §4: a summary handed over with its full covers_ids list is
// stored as its span, and the session is raised to format version 2.
func TestSummaryStoredAsSpan(t *testing.T) {
	dir := newSession(t)
	ids := chain(t, dir, 0, 6)
	if m, _ := store.ReadMeta(dir); m.FormatVersion != 1 {
		t.Fatalf("a session without summaries is format_version %d, want 1 (readable by older builds)", m.FormatVersion)
	}
	list := summaryNode("summary_a", "", ids[:4]...)
	mustAppend(t, dir, store.AppendOptions{}, list)
	if got := list.CoversIDs(); len(got) != 4 {
		t.Fatalf("Append changed the caller's metadata: covers_ids %v", got)
	}
	lines := summaryLines(t, dir)
	if len(lines) != 1 || !bytes.Contains(lines[0], []byte(`"covers_span":{"first":"c0","last":"c3","count":4}`)) || bytes.Contains(lines[0], []byte("covers_ids")) {
		t.Fatalf("stored summary: %s", lines)
	}
	if m, _ := store.ReadMeta(dir); m.FormatVersion != 2 {
		t.Fatalf("format_version %d after the first span, want 2", m.FormatVersion)
	}
	s := mustOpen(t, dir)
	ref, ok := s.RefByID("summary_a")
	if !ok || ref.CoversSpan != (transcript.CoverSpan{First: "c0", Last: "c3", Count: 4}) || ref.CoversIDs != nil || ref.CoverCount() != 4 {
		t.Fatalf("indexed ref: %+v", ref)
	}
	n, err := s.NodeByID("summary_a")
	if err != nil {
		t.Fatal(err)
	}
	if n.CoverCount() != 4 {
		t.Fatalf("node covers %d", n.CoverCount())
	}
}

// Issue 44: storage is linear in compactions. Each re-compaction of a
// growing chain covers every earlier turn again; its stored line must not
// grow with the segment (it did: every id, every time).
func TestSummaryBytesIndependentOfCoverage(t *testing.T) {
	dir := newSession(t)
	var all []string
	const rounds, per = 40, 50
	for r := range rounds {
		all = append(all, chain(t, dir, r*per, per)...)
		// Cover all but the last two nodes, as a compaction keeps a tail.
		sum := summaryNode(fmt.Sprintf("summary_%02d", r), "", all[:len(all)-2]...)
		mustAppend(t, dir, store.AppendOptions{}, sum)
	}
	lines := summaryLines(t, dir)
	if len(lines) != rounds {
		t.Fatalf("%d summary lines", len(lines))
	}
	first, last := len(lines[0]), len(lines[rounds-1])
	// The last covers 1998 ids where the first covers 48: a list would be
	// about 40 times longer; the span differs by a few digits.
	if last-first > 8 || last > 300 {
		t.Fatalf("summary line grows with its coverage: %d bytes covering 48 ids, %d covering %d", first, last, len(all)-2)
	}
	s := mustOpen(t, dir)
	ref, _ := s.RefByID(fmt.Sprintf("summary_%02d", rounds-1))
	if ref.CoverCount() != len(all)-2 {
		t.Fatalf("last summary covers %d, want %d", ref.CoverCount(), len(all)-2)
	}
}

// A span is checked as the list was: it walks back to its first node over
// real turns, with the summary at its splice point, or nothing is written.
func TestAppendRefusesBadCoverage(t *testing.T) {
	dir := newSession(t)
	ids := chain(t, dir, 0, 4)
	mustAppend(t, dir, store.AppendOptions{}, summaryNode("summary_ok", "", ids[:2]...))
	span := func(id, pred string, sp any) transcript.Node {
		n := summaryNode(id, pred)
		delete(n.Metadata, transcript.MetaCoversIDs)
		n.SetMeta(transcript.MetaCoversSpan, sp)
		return n
	}
	both := summaryNode("summary_b", "", ids[:2]...)
	both.SetMeta(transcript.MetaCoversSpan, transcript.CoverSpan{First: "c0", Last: "c1", Count: 2})
	for _, tc := range []struct {
		name string
		node transcript.Node
		want string
	}{
		{"count too large", span("summary_x", "", transcript.CoverSpan{First: "c0", Last: "c3", Count: 5}), "ends 1 nodes short of its count 5"},
		{"count too small", span("summary_x", "", transcript.CoverSpan{First: "c0", Last: "c3", Count: 3}), `3 nodes back from "c3" is "c1", not "c0"`},
		{"last missing", span("summary_x", "", transcript.CoverSpan{First: "c0", Last: "ghost", Count: 1}), `covers "ghost", which is not found`},
		{"last is a summary", span("summary_x", "", transcript.CoverSpan{First: "summary_ok", Last: "summary_ok", Count: 1}), `covers "summary_ok", a summary`},
		{"splice point", span("summary_x", "c0", transcript.CoverSpan{First: "c0", Last: "c3", Count: 4}), "predecessor must be the predecessor of the first covered node (null)"},
		{"malformed", span("summary_x", "", map[string]any{"first": "c0", "last": "c3"}), "metadata.covers_span must be"},
		{"both forms", both, "covers_ids or covers_span, not both"},
		{"list with a gap", summaryNode("summary_x", "", "c0", "c2"), `covers_ids is not a contiguous chain: "c2" does not follow "c0"`},
		{"list twice", summaryNode("summary_x", "", "c0", "c0"), `covers_ids names "c0" twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := os.ReadFile(filepath.Join(dir, store.NodesFile))
			_, err := tryAppend(dir, store.AppendOptions{}, tc.node)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			after, _ := os.ReadFile(filepath.Join(dir, store.NodesFile))
			if !bytes.Equal(before, after) {
				t.Fatal("a refused summary changed nodes.jsonl")
			}
		})
	}
	// A span written by hand (a line copied from nodes.jsonl) is stored
	// as given, and covers nodes of its own batch.
	mustAppend(t, dir, store.AppendOptions{}, user("c4", "", "q"), span("summary_y", "", transcript.CoverSpan{First: "c0", Last: "c4", Count: 5}))
	s := mustOpen(t, dir)
	if ref, _ := s.RefByID("summary_y"); ref.CoverCount() != 5 {
		t.Fatalf("summary_y: %+v", ref)
	}
}

// Within one transaction (an import), a span that extends the last
// summary's is walked back only to that summary's last node; what the
// shortcut skips is exactly what was checked, so every fault is still
// refused.
func TestSpanExtendingTheLastOneInATransaction(t *testing.T) {
	dir := newSession(t)
	ids := chain(t, dir, 0, 4)
	span := func(id, pred string, sp transcript.CoverSpan) transcript.Node {
		n := summaryNode(id, pred)
		delete(n.Metadata, transcript.MetaCoversIDs)
		n.SetMeta(transcript.MetaCoversSpan, sp)
		return n
	}
	_, err := store.Update(t.Context(), dir, testWrite, func(tx *store.Tx) error {
		if _, err := tx.Append([]transcript.Node{span("summary_a", "", transcript.CoverSpan{First: ids[0], Last: ids[1], Count: 2})}, store.AppendOptions{}); err != nil {
			return err
		}
		if _, err := tx.Append([]transcript.Node{user("c4", "", "q"), asst("c5", "", "a")}, store.AppendOptions{}); err != nil {
			return err
		}
		for _, bad := range []struct {
			node transcript.Node
			want string
		}{
			{span("summary_x", "c0", transcript.CoverSpan{First: ids[0], Last: "c5", Count: 6}), "predecessor must be"},
			{span("summary_x", "", transcript.CoverSpan{First: ids[1], Last: "c5", Count: 6}), `not "c1"`},
			{span("summary_x", "", transcript.CoverSpan{First: ids[0], Last: "c5", Count: 5}), `not "c0"`},
		} {
			if _, err := tx.Append([]transcript.Node{bad.node}, store.AppendOptions{}); err == nil || !strings.Contains(err.Error(), bad.want) {
				t.Errorf("%+v: err = %v, want %q", bad.node.Metadata, err, bad.want)
			}
		}
		_, err := tx.Append([]transcript.Node{span("summary_b", "", transcript.CoverSpan{First: ids[0], Last: "c5", Count: 6})}, store.AppendOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, dir)
	if ref, _ := s.RefByID("summary_b"); ref.CoverCount() != 6 || s.Meta.ActiveSummaryID != "summary_b" {
		t.Fatalf("summary_b: %+v, active %q", ref, s.Meta.ActiveSummaryID)
	}
}
