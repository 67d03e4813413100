package estimate

import (
	"os"
	"syscall"
)

// statMatches compares st with a stat session.json recorded; the ctime
// cannot be set by a user, so equal means nothing wrote the file since.
func statMatches(st os.FileInfo, rec chainStat) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && rec == chainStat{Size: st.Size(), MtimeNs: st.ModTime().UnixNano(), CtimeNs: sys.Ctim.Nano(), Dev: sys.Dev, Ino: sys.Ino}
}
