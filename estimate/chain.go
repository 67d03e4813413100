package estimate

// chainFields are the keys of session.json's hash chain of committed bytes
// (docs/FORMAT.md §1, "The hash chain"). They change with every commit, so
// the basis's fingerprint leaves them out; store.ChainExtends checks
// them.
var chainFields = []string{"nodes_sha256", "nodes_hash_state", "nodes_stat"}
