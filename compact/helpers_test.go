package compact

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/summarize"
	"github.com/ctxfold/ctxfold/transcript"
)

// checkAdjacency is the tool-adjacency rule over a rendered view: every
// tool result answers a call of the nearest assistant message before it
// (only result-carrying messages in between), and every call in the view
// whose result exists in the full history has that result in the view.
func checkAdjacency(view []*transcript.Node, history []*transcript.Node) error {
	return checkAdjacencyWith(view, answeredCalls(history))
}

// answeredCalls is the set of call ids with a result in history.
func answeredCalls(history []*transcript.Node) map[string]bool {
	resultOf := map[string]bool{}
	for _, n := range history {
		for _, r := range n.ToolResults() {
			resultOf[r.ToolCallID] = true
		}
	}
	return resultOf
}

func checkAdjacencyWith(view []*transcript.Node, resultOf map[string]bool) error {
	inView := map[string]bool{}
	for _, n := range view {
		for _, r := range n.ToolResults() {
			inView[r.ToolCallID] = true
		}
	}
	open := map[string]bool{}
	for _, n := range view {
		calls := n.AllToolCalls()
		results := n.ToolResults()
		for _, r := range results {
			if !open[r.ToolCallID] {
				return fmt.Errorf("node %q: result for %q does not follow its call", n.ID, r.ToolCallID)
			}
			delete(open, r.ToolCallID)
		}
		if len(results) == 0 || len(calls) > 0 {
			open = map[string]bool{}
		}
		for _, c := range calls {
			open[c.ID] = true
			if resultOf[c.ID] && !inView[c.ID] {
				return fmt.Errorf("node %q: call %q is in the view but its result is not", n.ID, c.ID)
			}
		}
	}
	return nil
}

// newSession writes nodes into a fresh session directory.
func newSession(t testing.TB, model string, nodes []transcript.Node) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "s")
	if _, err := store.Init(dir, model, store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	appendNodes(t, dir, nodes)
	return dir
}

func appendNodes(t testing.TB, dir string, nodes []transcript.Node) {
	t.Helper()
	_, err := store.Update(context.Background(), dir, store.WriteOptions{}, func(tx *store.Tx) error {
		_, err := tx.Append(nodes, store.AppendOptions{RootFirst: tx.Session().Meta.Head == ""})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// snapshotFiles returns the bytes of nodes.jsonl and session.json.
func snapshotFiles(t testing.TB, dir string) string {
	t.Helper()
	var all []byte
	for _, f := range []string{store.NodesFile, store.MetaFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	return string(all)
}

// events returns the events of a session, decoded.
func events(t testing.TB, dir string) []map[string]any {
	t.Helper()
	s, err := store.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out []map[string]any
	if _, err := s.ReadEvents(func(e store.EventLine) error {
		var m map[string]any
		if err := json.Unmarshal(e.Raw, &m); err != nil {
			return err
		}
		out = append(out, m)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func eventTypes(evs []map[string]any) []string {
	var out []string
	for _, e := range evs {
		out = append(out, fmt.Sprint(e["type"]))
	}
	return out
}

// stubSummarizer returns fixed text, counting calls; fn, when set, runs
// first (a slow summarizer, a concurrent writer).
type stubSummarizer struct {
	text  string
	err   error
	calls int
	last  summarize.Request
	fn    func(ctx context.Context) error
}

func (s *stubSummarizer) Name() string     { return "stub" }
func (s *stubSummarizer) CacheKey() string { return "stub" }
func (s *stubSummarizer) Summarize(ctx context.Context, req summarize.Request) (string, error) {
	s.calls++
	s.last = req
	if s.fn != nil {
		if err := s.fn(ctx); err != nil {
			return "", err
		}
	}
	return s.text, s.err
}

// mustNotCall fails the test if a no-op path reaches the summarizer.
type mustNotCall struct{ t testing.TB }

func (m mustNotCall) Name() string     { return "must-not-call" }
func (m mustNotCall) CacheKey() string { return "must-not-call" }
func (m mustNotCall) Summarize(context.Context, summarize.Request) (string, error) {
	m.t.Errorf("the summarizer was called on a no-op path")
	return "", fmt.Errorf("must not be called")
}
