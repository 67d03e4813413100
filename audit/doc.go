// Package audit measures what a compaction kept. It extracts the facts of
// the turns a summary covers and of their caller subtrees — the user's
// requests and instructions, file paths, shell commands, error lines of
// failed tool results, identifiers, URLs, numbers with units (Extract) —
// and checks each against what the model reads now: the summary and the
// kept tail after it (Run). docs/COMPACT.md §6 defines every kind.
//
// It reads sessions and never writes them; it counts no tokens and decides
// nothing about what the model reads (render does). compact uses Extract
// to recover facts an earlier summary dropped.
package audit
