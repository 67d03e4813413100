package transcript

// The summary node's shape, shared by compact, which writes summaries, and
// the formats, which import a client's own compaction as one.

// SummaryPrefix starts every summary node's content (docs/FORMAT.md §4).
const SummaryPrefix = "[Previous conversation summary]\n"

// SummaryName is the name of every summary node (docs/FORMAT.md §4).
const SummaryName = "context/summary"

// SummaryIDPrefix starts every summary node's id (docs/FORMAT.md §4).
const SummaryIDPrefix = "summary_"

// SummaryRole is the role a summary node carries: the model reads it as a
// user message in every provider format (docs/FORMAT.md).
const SummaryRole = RoleUser
