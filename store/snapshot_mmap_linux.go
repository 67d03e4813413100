package store

import (
	"os"
	"syscall"
	"unsafe"
)

// mapSections maps each section of the snapshot f privately (MAP_PRIVATE:
// copy on write, nothing written back), each followed by extra[i] bytes
// of anonymous memory, so a writer appends to the index in place instead
// of copying it, and returns the whole mapping too. A reader's mapping is
// never unmapped: ids handed out by the Session point into it and may
// outlive Close (a process maps a session's snapshot once per open; the
// pages are the page cache's). A writer's is (Session.transient).
func mapSections(f *os.File, h *snapHeader, extra [numSections]int64) ([numSections][]byte, []byte, error) {
	var out [numSections][]byte
	if os.Getpagesize() != snapPage {
		return out, nil, errBadSnapshot
	}
	var at [numSections]int64
	var total int64
	for i := range numSections {
		at[i] = total
		total += roundPage(h.secLen[i]) + roundPage(extra[i])
	}
	if total == 0 {
		return out, nil, nil
	}
	res, err := syscall.Mmap(-1, 0, int(total), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return out, nil, err
	}
	fd := f.Fd()
	for i := range numSections {
		n := roundPage(h.secLen[i])
		if n > 0 {
			addr := uintptr(unsafe.Pointer(&res[at[i]]))
			_, _, errno := syscall.Syscall6(syscall.SYS_MMAP, addr, uintptr(n), syscall.PROT_READ|syscall.PROT_WRITE,
				syscall.MAP_PRIVATE|syscall.MAP_FIXED, fd, uintptr(h.secOff[i]))
			if errno != 0 {
				_ = syscall.Munmap(res)
				return out, nil, errno
			}
		}
		out[i] = res[at[i] : at[i]+h.secLen[i] : at[i]+n+roundPage(extra[i])]
	}
	return out, res, nil
}

// unmap releases a mapping of mapSections; nil is none.
func unmap(m []byte) {
	if m != nil {
		_ = syscall.Munmap(m)
	}
}
