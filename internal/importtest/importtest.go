// Package importtest is an in-memory transcript.ImportTarget for the tests
// of vendor importers: it keeps what an importer hands over and checks the
// ordering contract (every predecessor, caller and covered id precedes the
// node naming it; ids are unique), so fuzz targets catch a broken emitter
// without touching the disk.
package importtest

import (
	"fmt"

	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// Target records conversations.
type Target struct {
	Convs []*Conv
}

// Conv is one conversation as handed over.
type Conv struct {
	Name     string
	Nodes    []transcript.Node
	Head     string
	Model    string
	Window   int64                // the configured window (transcript.WindowReporter)
	Counts   map[[2]string]int    // {record, outcome} → count
	Reasons  map[[2]string]string // {record, outcome} → the last reason given
	Warnings []string
	Attached []string // transcript.FileReporter
	Missing  []string
	seen     map[string]bool
}

// Conversation starts a conversation.
func (t *Target) Conversation(name string) (transcript.ImportSink, error) {
	c := &Conv{Name: name, Counts: map[[2]string]int{}, Reasons: map[[2]string]string{}, seen: map[string]bool{}}
	t.Convs = append(t.Convs, c)
	return c, nil
}

// Node checks the ordering contract and keeps n.
func (c *Conv) Node(n transcript.Node) error {
	if n.ID == "" {
		return fmt.Errorf("node %d has no id", len(c.Nodes)+1)
	}
	if c.seen[n.ID] {
		return fmt.Errorf("node %q handed over twice", n.ID)
	}
	refs := append([]string{n.Predecessor, n.Caller}, n.CoversIDs()...)
	if sp, ok := n.CoversSpan(); ok {
		refs = append(refs, sp.First, sp.Last)
	}
	for _, ref := range refs {
		if ref != "" && !c.seen[ref] {
			return fmt.Errorf("node %q names %q before it was handed over", n.ID, ref)
		}
	}
	if !n.Role.Valid() {
		return fmt.Errorf("node %q: invalid role %q", n.ID, n.Role)
	}
	c.seen[n.ID] = true
	c.Nodes = append(c.Nodes, n)
	return nil
}

func (c *Conv) SetHead(id string)     { c.Head = id }
func (c *Conv) SetModel(model string) { c.Model = model }

// AttachedFile and MissingFile implement transcript.FileReporter.
func (c *Conv) AttachedFile(path string) { c.Attached = append(c.Attached, path) }
func (c *Conv) MissingFile(path string)  { c.Missing = append(c.Missing, path) }

// SetConfiguredWindow implements transcript.WindowReporter.
func (c *Conv) SetConfiguredWindow(tokens int64) { c.Window = tokens }
func (c *Conv) Count(record, outcome, reason string) {
	c.Counts[[2]string{record, outcome}]++
	c.Reasons[[2]string{record, outcome}] = reason
}
func (c *Conv) Warn(file string, line int, msg string) {
	c.Warnings = append(c.Warnings, store.Warning{File: file, Line: line, Msg: msg}.String())
}

// Stats are the counts the importer tests compare with an independent
// count of the input.
type Stats struct {
	Nodes, Summaries, User, Assistant, Tool, System int
	// Calls are tool calls made; Results tool results carried.
	Calls, Results int
}

// StatsOf counts the nodes of a conversation.
func StatsOf(nodes []transcript.Node) Stats {
	var s Stats
	for i := range nodes {
		n := &nodes[i]
		s.Nodes++
		switch {
		case n.IsSummary():
			s.Summaries++
		case n.Role == transcript.RoleUser:
			s.User++
		case n.Role == transcript.RoleAssistant:
			s.Assistant++
		case n.Role == transcript.RoleTool:
			s.Tool++
		case n.Role == transcript.RoleSystem:
			s.System++
		}
		s.Calls += len(n.AllToolCalls())
		s.Results += len(n.ToolResults())
	}
	return s
}

// Covers is summary n's coverage as ids: its covers_ids, or its
// covers_span walked back over the nodes handed over (docs/FORMAT.md §4);
// nil when the span does not resolve.
func (c *Conv) Covers(n transcript.Node) []string {
	sp, ok := n.CoversSpan()
	if !ok {
		return n.CoversIDs()
	}
	pred := make(map[string]string, len(c.Nodes))
	for _, m := range c.Nodes {
		pred[m.ID] = m.Predecessor
	}
	ids := make([]string, sp.Count)
	x := sp.Last
	for k := sp.Count - 1; k >= 0; k-- {
		if _, ok := pred[x]; !ok {
			return nil
		}
		ids[k] = x
		x = pred[x]
	}
	if ids[0] != sp.First {
		return nil
	}
	return ids
}
