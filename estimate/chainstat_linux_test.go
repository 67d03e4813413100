package estimate

import (
	"os"
	"syscall"

	"github.com/ctxfold/ctxfold/store"
)

// recordedStat is the fingerprint the store records for nodes.jsonl
// (store/stat_linux.go): size, mtime, ctime, device and inode.
func recordedStat(st os.FileInfo) store.FileStat {
	sys := st.Sys().(*syscall.Stat_t)
	return store.FileStat{Size: st.Size(), MtimeNs: st.ModTime().UnixNano(), CtimeNs: sys.Ctim.Nano(), Dev: sys.Dev, Ino: sys.Ino}
}
