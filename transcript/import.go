package transcript

// Import interfaces: vendor importers (format/claudecode, format/codex,
// …) turn an export into nodes and hand them to an ImportSink; the importer
// registry (importer) owns writing them to session directories.
// Keeping the interfaces here lets each vendor package stay independent of
// the registry.

// Outcomes of one input record, for the import report.
const (
	OutcomeImported = "imported"
	OutcomeMerged   = "merged"
	OutcomeSkipped  = "skipped"
)

// ImportSink receives one conversation. Nodes arrive in an order where
// every predecessor and caller precedes the nodes that name it; the sink
// appends them through the store, which validates them. A summary names
// what it covers with metadata.covers_ids (the chain's ids, in order),
// which the store keeps as their span, or — cheaper for a format that
// compacts often, since it skips encoding and checking every id again —
// directly with metadata.covers_span (Node.WithCoverSpan; docs/FORMAT.md §4).
type ImportSink interface {
	// Node adds the next node.
	Node(n Node) error
	// SetHead names the conversation's HEAD (default: the last node that
	// extended the main chain).
	SetHead(id string)
	// SetModel records the model the conversation used, when known.
	SetModel(model string)
	// Count records what happened to one input record: record is its type
	// as the format names it ("assistant", "progress", "response_item/
	// function_call", …), outcome one of the Outcome constants, reason a
	// short phrase for merged and skipped records.
	Count(record, outcome, reason string)
	// Warn reports something odd that did not stop the import.
	Warn(file string, line int, msg string)
}

// FileReporter is implemented by sinks that report the files an importer
// read into a conversation beside the ones it was given (Claude Code's
// sub-agent files), and the ones the input names but that were not found.
// An importer checks for it with a type assertion.
type FileReporter interface {
	AttachedFile(path string)
	MissingFile(path string)
}

// WindowReporter is implemented by sinks that take the context window the
// client's own configuration gives the session's model (OpenCode's
// provider.<id>.models.<id>.limit.context, pi's models.json contextWindow,
// …), for a custom model no table knows. A window a node's usage records
// (Usage.ContextWindow) beats it: the session file is the better witness.
// An importer checks for it with a type assertion.
type WindowReporter interface {
	SetConfiguredWindow(tokens int64)
}

// ImportTarget opens one sink per conversation; name is a sanitized id
// used for the session directory when a file holds several conversations.
type ImportTarget interface {
	Conversation(name string) (ImportSink, error)
}
