package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// Re-importing a log that grew (import --append) adds only what is new.
// A streamed model request is recorded as several lines that importers
// merge into one node (reasoning, text, tool calls), so a log copied
// while a request was streaming ends inside that node: the first import
// stores its first part, and the full log later imports the same id with
// more. Nodes are append-only, so the stored part stays, and the whole
// request is written as a new node, id "ID~2" (then "ID~3" if the log is
// cut inside the same request again), beside the stored part: the
// request's tool calls stay in one node and its results follow it, as
// every provider requires. A stored node whose predecessor the import now
// places elsewhere (it followed such a partial node, or the importer
// placed it differently with more of the log to go on) gets its new copy
// the same way, so the live branch is rebuilt node by node; the stored
// nodes remain as an off-branch tip. Each copy's metadata.import_replaces
// names the node it stands in for (docs/FORMAT.md §1, "Re-importing a
// grown log"). New nodes that named ID as predecessor or caller follow
// the newest copy, and a summary's covers_ids names it.

// contID is the id of the k-th copy (k ≥ 2) of the node id.
func contID(id string, k int) string { return fmt.Sprintf("%s~%d", id, k) }

// grown is what continuation decided for one stored node.
type grown struct {
	// follow is the id that stands for the node on the live branch, when
	// it is not the node's own id.
	follow string
	// node is the copy to append (nil: nothing new).
	node *transcript.Node
	// differs: what is stored is not a prefix of the import (kept as
	// stored and reported).
	differs bool
}

// continuation compares n, freshly imported and with its links already
// mapped to the live branch, with the newest copy the session holds
// under its id.
func continuation(s *store.Session, n *transcript.Node) grown {
	parts := 1
	for ; ; parts++ {
		if _, ok := s.Lookup(contID(n.ID, parts+1)); !ok {
			break
		}
	}
	repID := n.ID
	if parts > 1 {
		repID = contID(n.ID, parts)
	}
	g := grown{}
	if repID != n.ID {
		g.follow = repID
	}
	rep, err := s.NodeByID(repID)
	if err != nil {
		g.differs = true
		return g
	}
	restBlocks, okB := restAfter(contentBlocks(rep.Content), contentBlocks(n.Content))
	restCalls, okC := restAfter(rep.ToolCalls, n.ToolCalls)
	extends := okB && okC && rep.Role == n.Role
	grew := extends && (len(restBlocks) > 0 || len(restCalls) > 0)
	moved := rep.Predecessor != n.Predecessor
	if n.IsSummary() && !sameCoverage(rep, n) {
		moved = true
	}
	if !grew && !moved {
		// Nothing new but perhaps the usage or metadata a request gains at
		// its end: the stored node is kept as it is, and reported.
		g.differs = !extends || (parts == 1 && !sameNode(s, n))
		return g
	}
	c := *n
	c.ID = contID(n.ID, parts+1)
	c.Metadata = maps.Clone(n.Metadata)
	c.SetMeta("import_replaces", repID)
	g.follow, g.node = c.ID, &c
	return g
}

// contentBlocks is c as blocks: a plain string is one text block (none
// when empty).
func contentBlocks(c transcript.Content) []transcript.Block {
	if c.IsBlocks {
		return c.Blocks
	}
	if c.Text == "" {
		return nil
	}
	return []transcript.Block{{Type: transcript.BlockText, Text: c.Text}}
}

// restAfter returns what follows stored in full when stored is a prefix of
// full (element by element, compared as JSON).
func restAfter[T any](stored, full []T) ([]T, bool) {
	if len(stored) > len(full) {
		return nil, false
	}
	for i := range stored {
		if !sameJSON(stored[i], full[i]) {
			return nil, false
		}
	}
	return full[len(stored):], true
}

func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// sameCoverage: the stored summary rep covers what the imported n does.
// A stored span (docs/FORMAT.md §4, format version 2) is compared with the
// span of n's list, which the store checked to be a chain when it wrote
// rep; a stored list with n's list.
func sameCoverage(rep, n *transcript.Node) bool {
	if sp, ok := rep.CoversSpan(); ok {
		if nsp, ok := n.CoversSpan(); ok {
			return sp == nsp
		}
		ids := n.CoversIDs()
		return len(ids) > 0 && transcript.SpanOf(ids) == sp
	}
	return sameJSON(rep.CoversIDs(), n.CoversIDs())
}

// sameNode: the session's stored line for n's id is n encoded, as the
// store would write it (a summary's covers_ids list as its span).
func sameNode(s *store.Session, n *transcript.Node) bool {
	i, ok := s.Lookup(n.ID)
	if !ok {
		return false
	}
	if ids := n.CoversIDs(); n.IsSummary() && len(ids) > 0 && s.Ref(i).CoversSpan.Valid() {
		c := *n
		c.WithCoverSpan(transcript.SpanOf(ids))
		n = &c
	}
	stored, err := s.RawLine(i)
	// Encoded as the store writes it: json.Marshal would escape <, > and &
	// in the node's own encoding, and every stored line holding one would
	// be reported as differing.
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	merr := e.Encode(n)
	var compact bytes.Buffer
	return err == nil && merr == nil && json.Compact(&compact, buf.Bytes()) == nil && bytes.Equal(bytes.TrimSpace(stored), compact.Bytes())
}
