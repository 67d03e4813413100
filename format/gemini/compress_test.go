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

// TestCompressionMergesRepeatedResult: after a resume Gemini CLI 0.61 holds a
// call's result twice (docs/INTEROP-gemini-cli.md); its compression merges
// the two into one user message with the same functionResponse twice
// (recorded with the real client by interop/gemini-cli
// TestLiveUncompactResume). That message is the kept turn the call's one
// tool node already is: the import covers what the CLI compressed and
// keeps one result per call (it failed with "already has a result").
func TestCompressionMergesRepeatedResult(t *testing.T) {
	file := filepath.Join(t.TempDir(), "session-x.jsonl")
	call := `{"functionCall":{"id":"c1","name":"run_shell_command","args":{"command":"ls"}}}`
	resp := `{"functionResponse":{"id":"c1","name":"run_shell_command","response":{"output":"x"}}}`
	data := `{"sessionId":"s","projectHash":"p","startTime":"t","kind":"main"}
{"id":"u1","type":"user","content":[{"text":"one"}]}
{"id":"a1","type":"gemini","content":"r1"}
{"id":"u2","type":"user","content":[{"text":"two"}]}
{"id":"a2","type":"gemini","content":[` + call + `]}
{"id":"t2","type":"user","content":[` + resp + `]}
{"id":"a3","type":"gemini","content":"r3"}
{"$set":{"messages":[{"id":"u1","type":"user","content":[{"text":"one"}]},{"id":"a1","type":"gemini","content":"r1"},` +
		`{"id":"u2","type":"user","content":[{"text":"two"}]},{"id":"a2","type":"gemini","content":[` + call + `]},` +
		`{"id":"a2_response","type":"user","content":[` + resp + `]},{"id":"t2","type":"user","content":[` + resp + `]},` +
		`{"id":"a3","type":"gemini","content":"r3"}]}}
{"$set":{"messages":[{"id":"s1","type":"user","content":[{"text":"<state_snapshot>A</state_snapshot>"}]},` +
		`{"id":"k1","type":"gemini","content":[{"text":"Got it. Thanks for the additional context!"}]},` +
		`{"id":"u2b","type":"user","content":[{"text":"two"}]},{"id":"a2b","type":"gemini","content":[` + call + `]},` +
		`{"id":"t2b","type":"user","content":[` + resp + `,` + resp + `]},{"id":"a3b","type":"gemini","content":[{"text":"r3"}]}]}}
{"id":"u4","type":"user","content":[{"text":"four"}]}
`
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "s")
	if _, err := importer.Import(context.Background(), importer.Options{From: "gemini", Files: []string{file}, Out: dir}); err != nil {
		t.Fatal(err)
	}
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	if a := g.ActiveSummary(); a < 0 || strings.Join(g.CoverIDs(a), " ") != "u1 a1" {
		t.Fatalf("the compression does not cover u1 a1 (active %d)", g.ActiveSummary())
	}
	tools := 0
	for i := 0; i < g.S.Len(); i++ {
		n, err := g.S.Node(i)
		if err != nil {
			t.Fatal(err)
		}
		if n.ToolCallID == "c1" {
			tools++
		}
	}
	if tools != 1 {
		t.Errorf("%d tool nodes answer c1, want 1", tools)
	}
}
