// Package hook owns what `ctxfold hook` does inside a client's compaction
// (docs/HOOKS.md): the hook input a client sends, the per-transcript hook
// state under the cache folder, bringing the transcript's cache session up
// to date before the client folds it, and — once the client's compaction
// record is in the transcript — the facts its summary dropped (audit's core,
// ranked by audit.Rank, pins first), cut to a token budget counted by
// estimate and returned as the additionalContext the client adds to what the
// model reads next. It never writes outside the cache folder.
package hook
