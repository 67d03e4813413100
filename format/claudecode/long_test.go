package claudecode

import "os"

// longRun reports whether this is the long run (CTXFOLD_LONG=1, which
// .ci/run sets): it takes every case of the sampling and crash tests; go
// test ./... takes their short samples.
func longRun() bool { return os.Getenv("CTXFOLD_LONG") != "" }
