// Package compact owns offline rolling compaction (docs/COMPACT.md;
// the summary node is docs/FORMAT.md §4): the plan that picks whole turns to fold (pure, no I/O),
// validation of a candidate summary (written by a summarize.Summarizer) in
// memory, and persistence of exactly one summary node
// through store.Update. It never counts tokens itself (every figure
// comes from estimate), never moves HEAD and never rewrites a node.
// docs/COMPACT.md states each rule once.
package compact
