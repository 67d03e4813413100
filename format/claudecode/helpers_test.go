package claudecode

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// Every state a test saves from a base is checked against the planner's
// own encoding (snapsave.go); benchmarks turn the check off.
func init() { checkBaseRelative = true }

// memTarget is an in-memory ImportTarget: it records what the importer
// hands over, and checks the sink contract as it goes (a predecessor or
// caller is always a node already received).
type memTarget struct {
	convs []*memSink
	byKey map[string]*memSink
}

type memSink struct {
	name     string
	nodes    []transcript.Node
	ids      map[string]bool
	head     string
	model    string
	counts   map[[3]string]int
	lines    int
	warnings []string
	order    error // first sink-contract violation
	// checkpoints are how many nodes were sent at each Checkpoint.
	checkpoints []int
}

// Checkpoint implements Checkpointer.
func (s *memSink) Checkpoint() error {
	s.checkpoints = append(s.checkpoints, len(s.nodes))
	return nil
}

func (t *memTarget) Conversation(name string) (transcript.ImportSink, error) {
	if t.byKey == nil {
		t.byKey = map[string]*memSink{}
	}
	if t.byKey[name] != nil {
		return nil, fmt.Errorf("conversation %q opened twice", name)
	}
	s := &memSink{name: name, ids: map[string]bool{}, counts: map[[3]string]int{}}
	t.byKey[name] = s
	t.convs = append(t.convs, s)
	return s, nil
}

func (s *memSink) Node(n transcript.Node) error {
	if s.order == nil {
		switch {
		case s.ids[n.ID]:
			s.order = fmt.Errorf("node %q sent twice", n.ID)
		case n.Predecessor != "" && !s.ids[n.Predecessor]:
			s.order = fmt.Errorf("node %q: predecessor %q not sent before it", n.ID, n.Predecessor)
		case n.Caller != "" && !s.ids[n.Caller]:
			s.order = fmt.Errorf("node %q: caller %q not sent before it", n.ID, n.Caller)
		}
	}
	s.ids[n.ID] = true
	s.nodes = append(s.nodes, n)
	return nil
}

func (s *memSink) SetHead(id string)     { s.head = id }
func (s *memSink) SetModel(model string) { s.model = model }
func (s *memSink) Warn(file string, line int, msg string) {
	s.warnings = append(s.warnings, fmt.Sprintf("%s:%d: %s", file, line, msg))
}
func (s *memSink) Count(record, outcome, reason string) {
	s.counts[[3]string{record, outcome, reason}]++
	s.lines++
}

// countOf sums the counts of one record type and outcome.
func (s *memSink) countOf(record, outcome string) int {
	total := 0
	for k, n := range s.counts {
		if k[0] == record && k[1] == outcome {
			total += n
		}
	}
	return total
}

func importMem(t testing.TB, files ...string) *memTarget {
	t.Helper()
	var tgt memTarget
	if err := Import(context.Background(), files, Options{}, &tgt); err != nil {
		t.Fatalf("import: %v", err)
	}
	for _, c := range tgt.convs {
		if c.order != nil {
			t.Fatalf("conversation %s: %v", c.name, c.order)
		}
	}
	return &tgt
}

// writeSession writes a conversation through the store the way the
// registry does (store.Init, then appends in one transaction, a new
// batch at each root so the store keeps it a root), so the store's
// validation judges the importer's output.
func writeSession(t testing.TB, dir string, s *memSink) {
	t.Helper()
	if _, err := store.Init(dir, s.model, store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := store.Update(context.Background(), dir, store.WriteOptions{}, func(tx *store.Tx) error {
		var batch []transcript.Node
		root := false
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			_, err := tx.Append(batch, store.AppendOptions{RootFirst: root, AsRecorded: true})
			batch = nil
			return err
		}
		for _, n := range s.nodes {
			if (n.Predecessor == "" && !n.IsSummary()) || len(batch) >= 500 {
				if err := flush(); err != nil {
					return err
				}
				root = n.Predecessor == "" && !n.IsSummary()
			}
			batch = append(batch, n)
		}
		if err := flush(); err != nil {
			return err
		}
		if s.head != "" {
			return tx.SetHead(s.head)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("store refused conversation %s: %v", s.name, err)
	}
}

// stored imports files, writes every conversation as a session and checks
// it opens with no integrity fault; it returns the session directories by
// conversation name.
func stored(t testing.TB, files ...string) (*memTarget, map[string]string) {
	t.Helper()
	tgt := importMem(t, files...)
	root := t.TempDir()
	dirs := map[string]string{}
	for _, c := range tgt.convs {
		dir := filepath.Join(root, c.name)
		writeSession(t, dir, c)
		s, err := store.Open(dir, store.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, errs := dag.New(s); len(errs) > 0 {
			t.Fatalf("conversation %s: integrity: %v", c.name, errs[0])
		}
		s.Close()
		dirs[c.name] = dir
	}
	return tgt, dirs
}

// renderIDs renders a stored session from HEAD.
func renderIDs(t testing.TB, dir string, raw bool) []string {
	t.Helper()
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	v, err := render.Build(g, "", raw)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.LoadNodes(); err != nil {
		t.Fatal(err)
	}
	return v.IDs()
}
