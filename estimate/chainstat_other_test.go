//go:build !linux

package estimate

import (
	"os"

	"github.com/ctxfold/ctxfold/store"
)

// recordedStat is size and mtime only: off Linux the store records no
// fingerprint it trusts (store/stat_other.go), and the tests that need one
// are skipped.
func recordedStat(st os.FileInfo) store.FileStat {
	return store.FileStat{Size: st.Size(), MtimeNs: st.ModTime().UnixNano()}
}
