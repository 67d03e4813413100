package store

import (
	"os"
	"syscall"
)

// statOf is the fingerprint of an open file.
func statOf(st os.FileInfo) (FileStat, bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return FileStat{}, false
	}
	return FileStat{
		Size:    st.Size(),
		MtimeNs: st.ModTime().UnixNano(),
		CtimeNs: sys.Ctim.Nano(),
		Dev:     sys.Dev,
		Ino:     sys.Ino,
	}, true
}
