// Package compact owns offline rolling compaction (seed 000 §1, §2, §4;
// seed 001 §02): the plan that picks whole turns to fold (pure, no I/O),
// the summarizers (extractive, OpenAI-compatible, exec), validation of a
// candidate summary in memory, and persistence of exactly one summary node
// through transcript.Update. It never counts tokens itself (every figure
// comes from estimate), never moves HEAD and never rewrites a node.
// docs/COMPACT.md states each rule once.
package compact
