package transcript

import (
	"encoding/json"
	"maps"
)

// Metadata keys of a summary's coverage (docs/FORMAT.md §4). A summary
// covers an ordered, contiguous predecessor chain of real turns. Format
// version 1 stores it as the list of its ids (covers_ids); version 2
// stores the chain's endpoints and length (covers_span), since a
// re-compaction covers the previous segment again and a list per summary
// made storage quadratic in the number of compactions.
const (
	MetaCoversIDs  = "covers_ids"
	MetaCoversSpan = "covers_span"
)

// CoverSpan is a summary's coverage as format version 2 stores it: the
// chain that ends at Last and runs Count nodes back along predecessor
// links to First. Last names the chain (ids, never a sequence interval,
// so sibling branches stay apart); First and Count are what a reader
// checks the walk against.
type CoverSpan struct {
	First string `json:"first"`
	Last  string `json:"last"`
	Count int    `json:"count"`
}

// Valid reports whether the span names two ids and a positive length.
func (sp CoverSpan) Valid() bool { return sp.First != "" && sp.Last != "" && sp.Count > 0 }

// SpanOf is the span of a non-empty contiguous chain of ids (the caller
// has checked that it is one).
func SpanOf(ids []string) CoverSpan {
	return CoverSpan{First: ids[0], Last: ids[len(ids)-1], Count: len(ids)}
}

// ParseCoverSpan decodes a covers_span value; ok is false unless it is an
// object with non-empty string first and last and a positive integer
// count. The store's index and Node.CoversSpan use it alike, so both read
// a span the same way.
func ParseCoverSpan(raw []byte) (CoverSpan, bool) {
	var v struct {
		First *string `json:"first"`
		Last  *string `json:"last"`
		Count *int    `json:"count"`
	}
	i := SkipJSONSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' || json.Unmarshal(raw, &v) != nil || v.First == nil || v.Last == nil || v.Count == nil {
		return CoverSpan{}, false
	}
	sp := CoverSpan{First: *v.First, Last: *v.Last, Count: *v.Count}
	return sp, sp.Valid()
}

// CoversSpan returns metadata.covers_span; ok is false when it is absent
// or malformed.
func (n *Node) CoversSpan() (CoverSpan, bool) {
	raw, ok := n.Metadata[MetaCoversSpan]
	if !ok {
		return CoverSpan{}, false
	}
	return ParseCoverSpan(raw)
}

// CoverCount is how many nodes the summary covers, in either stored form.
func (n *Node) CoverCount() int {
	if sp, ok := n.CoversSpan(); ok {
		return sp.Count
	}
	return len(n.CoversIDs())
}

// WithCoverSpan replaces the node's covers_ids by covers_span sp, on a copy
// of its metadata (the caller's map is left as it was).
func (n *Node) WithCoverSpan(sp CoverSpan) {
	n.Metadata = maps.Clone(n.Metadata)
	delete(n.Metadata, MetaCoversIDs)
	n.SetMeta(MetaCoversSpan, sp)
}
