//go:build unix

package live

import (
	"os"
	"runtime/debug"
	"syscall"
)

// mappedHook, when set, runs between the mapping and the reads (tests
// cut the file there).
var mappedHook func(*os.File)

// hashMapped is hashUpTo over a mapping of f instead of reads: a 100 MB
// prefix read through read(2) spent as long copying the page cache into
// a buffer as hashing it (docs/BENCHMARKS.md, "step 4"). The file is the
// one a client is writing, so it may be cut short while mapped: a fault
// reading past its new end is recovered (debug.SetPanicOnFault) and ok is
// false, as it is whenever the file cannot be mapped; the caller then
// reads it.
func hashMapped(f *os.File, cut int64, wantPrefix bool, limit int64) (prefix, full string, size int64, ok bool) {
	st, err := f.Stat()
	if err != nil {
		return "", "", 0, false
	}
	end := st.Size()
	if limit >= 0 && limit < end {
		end = limit
	}
	if end <= 0 || int64(int(end)) != end {
		return "", "", 0, false
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, int(end), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return "", "", 0, false
	}
	defer syscall.Munmap(m)
	if mappedHook != nil {
		mappedHook(f)
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, isFault := r.(interface{ Addr() uintptr }); !isFault {
				panic(r)
			}
			prefix, full, size, ok = "", "", 0, false
		}
	}()
	h := newPrefixHash()
	if wantPrefix {
		n := min(cut, end)
		_, _ = h.Write(m[:n])
		if n == cut {
			prefix = sumHex(h)
		}
		m = m[n:]
	}
	_, _ = h.Write(m)
	return prefix, sumHex(h), end, true
}
