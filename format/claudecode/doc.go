// Package claudecode imports Claude Code session transcripts (the
// ~/.claude/projects/<project>/<session>.jsonl files, plus their sub-agent
// files) into nodes for a transcript.ImportSink. It owns the mapping of
// Claude Code's records to ctxfold nodes; it never writes a session
// itself (the importer registry does, through the store) and never reads
// a file other than the ones it is given and the sidechain files lying
// beside them.
//
// Mapping:
//
//   - uuid/parentUuid become id/predecessor. Lines that are not
//     conversation (progress, system events, file-history snapshots, queue
//     operations, titles) are skipped and counted; their uuids stay
//     resolvable, so a message whose parent is a progress line hangs from
//     the nearest imported ancestor.
//   - Assistant lines streamed as one API message (same message.id and
//     requestId) merge into one assistant node, whose usage is the last
//     line's. Usage: input_tokens is what the model read for the request
//     (input_tokens + cache_read_input_tokens + cache_creation_input_tokens),
//     cached_input_tokens is cache_read_input_tokens, output_tokens as
//     reported; cache_creation_input_tokens is kept beside them.
//   - tool_use blocks become tool_call blocks of the assistant node;
//     a user line carrying tool_result blocks becomes a user node with
//     tool_result blocks (the Anthropic shape, so every provider renders
//     it). Results of one message are chained one after the other in file
//     order, even where Claude Code hung each from the line of its own call,
//     so the store sees every call answered on one chain. A result with no
//     open call on its chain is kept as text and flagged.
//   - thinking keeps its text and signature; images become references
//     (media type, sha256 digest and size), never bytes.
//   - Sidechains (inline isSidechain lines, agent-*.jsonl beside the
//     session, <session>/subagents/agent-*.jsonl) become caller subtrees of
//     the assistant node whose Task/Agent call spawned them. Copies of
//     sub-agent messages inside progress lines are not imported twice.
//   - system/compact_boundary plus its isCompactSummary user line become one
//     summary node (docs/FORMAT.md §4) covering the chain before the boundary; the
//     turns after it continue from the last covered node, so a render shows
//     what Claude Code's model saw after compaction and a raw render shows
//     everything. A second compaction covers the first one's turns too.
//   - Claude Code 2.1.3xx records what it sent beside the conversation.
//     The session's first api-request-shape becomes the system node every
//     main chain starts from (its system text blocks joined by a blank
//     line, its tool definitions in metadata.tools), and a sub-agent
//     file's first shape starts the sub-agent's chain (in its caller
//     subtree); later shapes are counted as skipped. An attachment with rendered content becomes a
//     node: renderedRole "system" a system node marked system_message (its
//     <system-reminder> wrapper removed, as the client sends it), any other
//     a user node. The nodes of one turn are chained in the order the
//     client sends them — tool results, attachments rendered into the user
//     message, the user's lines, then the system-role attachments — not in
//     file order. Where the api-request-blob a request records for a turn
//     shows a user line sent differently (a task notification wrapped in a
//     reminder), the node carries the sent text and keeps its own in
//     metadata.claude_code.recorded_text. api-request and api-request-blob
//     lines are otherwise copies and are counted as skipped.
//   - A compact_boundary's compactMetadata.preservedMessages are the
//     messages the client kept verbatim: the summary covers the chain up
//     to the first of them, which follows it in the view.
//   - A uuid seen twice (a resumed session) is imported once; a parent that
//     does not exist makes a root, with a warning.
//
// Reading is streamed: a first pass keeps only each line's structure
// (ids, offsets, tool-call ids), the second reads the lines of one node
// at a time, so memory stays far below the file size.
package claudecode
