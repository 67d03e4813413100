package gemini_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/store"
)

// TestCompressionTwice: two compressions in one file import as two summary
// nodes through the store (which validates their shape): the second covers
// the first one's turns too, the kept turns stay on the spine under their
// first ids, and the last summary is the active one (issue 29 #10).
func TestCompressionTwice(t *testing.T) {
	file := filepath.Join(t.TempDir(), "session-x.jsonl")
	snap := func(id, text, ack string, kept ...string) string {
		s := `{"$set":{"messages":[{"id":"` + id + `","type":"user","content":[{"text":"<state_snapshot>` + text + `</state_snapshot>"}]},` +
			`{"id":"` + ack + `","type":"gemini","content":[{"text":"Got it. Thanks for the additional context!"}]}`
		for _, k := range kept {
			s += "," + k
		}
		return s + "]}}\n"
	}
	data := `{"sessionId":"s","startTime":"t","kind":"main"}
{"id":"u1","type":"user","content":[{"text":"one"}]}
{"id":"a1","type":"gemini","content":"r1"}
{"id":"u2","type":"user","content":[{"text":"two"}]}
{"id":"a2","type":"gemini","content":"r2"}
` + snap("s1", "A", "k1", `{"id":"u2b","type":"user","content":[{"text":"two"}]}`, `{"id":"a2b","type":"gemini","content":[{"text":"r2"}]}`) +
		`{"id":"u3","type":"user","content":[{"text":"three"}]}
{"id":"a3","type":"gemini","content":"r3"}
` + snap("s2", "B", "k2", `{"id":"u3b","type":"user","content":[{"text":"three"}]}`, `{"id":"a3b","type":"gemini","content":[{"text":"r3"}]}`) +
		`{"id":"u4","type":"user","content":[{"text":"four"}]}
`
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "s")
	if _, err := importer.Import(context.Background(), importer.Options{From: "gemini", Files: []string{file}, Out: dir}); err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	g, err := dag.Load(s)
	if err != nil {
		t.Fatal(err)
	}
	var spine []string
	covers := map[string]string{}
	var last string
	for i := 0; i < s.Len(); i++ {
		n, err := s.Node(i)
		if err != nil {
			t.Fatal(err)
		}
		if n.IsSummary() {
			covers[n.ID] = n.Predecessor + "|" + strings.Join(g.CoverIDs(i), " ")
			last = n.ID
			continue
		}
		spine = append(spine, n.ID+"<"+n.Predecessor)
	}
	if got := strings.Join(spine, " "); got != "u1< a1<u1 u2<a1 a2<u2 u3<a2 a3<u3 u4<a3" {
		t.Errorf("nodes %s", got)
	}
	if covers["summary_s1"] != "|u1 a1" || covers["summary_s2"] != "|u1 a1 u2 a2" {
		t.Errorf("summaries %v", covers)
	}
	if s.Meta.ActiveSummaryID != last || last != "summary_s2" {
		t.Errorf("active summary %q, want summary_s2", s.Meta.ActiveSummaryID)
	}
}
