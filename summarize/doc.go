// Package summarize owns the summarizers that turn covered turns into
// summary text: Extractive (offline, deterministic, no model), OpenAI (any
// Chat Completions endpoint, with retries, chunking and a call budget) and
// Exec (a local command), the Request they take, the structured sections
// every summary has, and the Limiter that lets a caller with its own budget
// (fit) cap provider calls. It neither reads nor writes sessions: compact
// and fit hand it nodes and store what it returns.
package summarize
