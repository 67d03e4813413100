// Package transcript owns the node model and the session directory: reading
// nodes.jsonl as a streamed index, and every write to a session (append,
// HEAD moves, meta, events) under one exclusive lock.
//
// Durability: a write appends its lines with a single write and fsync, then
// commits them by atomically replacing session.json with the new committed
// length of nodes.jsonl. Readers see only committed bytes, so a batch is all
// or nothing and a crash at any instant leaves a session that opens; the
// next writer moves the uncommitted bytes to lost+found/ instead of
// discarding them.
//
// It must not decide what the model reads (render/) or count tokens
// (estimate/), and it never imports cobra, viper or os.Std*.
package transcript
