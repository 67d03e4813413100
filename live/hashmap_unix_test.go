//go:build unix

package live

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A file cut short while its mapping is hashed is no crash: the fault is
// recovered and the file is read instead, as it is now.
func TestHashMappedFileCutShort(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte('a' + i%26)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if p, full, n, ok := hashMapped(f, 1000, true, -1); !ok || n != int64(len(data)) || p == "" || full == "" {
		t.Fatalf("mapped hash of the whole file: ok %v, %d bytes", ok, n)
	}
	defer func() { mappedHook = nil }()
	mappedHook = func(*os.File) {
		if err := os.Truncate(path, 4096); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, _, ok := hashMapped(f, 1000, true, -1); ok {
		t.Fatal("a file cut while mapped hashed as if whole")
	}
	mappedHook = nil
	// The read path then sees the file as it is now.
	_, full, n, err := hashFile(path, 1000, true)
	want := newPrefixHash()
	want.Write(data[:4096])
	if err != nil || n != 4096 || full != sumHex(want) {
		t.Fatalf("hashFile after the cut: %d bytes, %v", n, err)
	}
}

// The mapped hash is the read one.
func TestHashMappedEqualsRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	data := make([]byte, 3*hashBuf+123)
	for i := range data {
		data[i] = byte(i * 13)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cut, limit int64
		prefix     bool
	}{{0, -1, true}, {1000, -1, true}, {int64(len(data)), -1, true}, {int64(len(data)) + 5, -1, true}, {1000, 5000, true}, {1000, -1, false}, {hashBuf, 2*hashBuf + 1, true}} {
		f, _ := os.Open(path)
		mp, mf, mn, ok := hashMapped(f, c.cut, c.prefix, c.limit)
		f.Close()
		h := newPrefixHash()
		end := int64(len(data))
		if c.limit >= 0 {
			end = min(end, c.limit)
		}
		var wp string
		if c.prefix && c.cut <= end {
			h.Write(data[:c.cut])
			wp = sumHex(h)
			h.Write(data[c.cut:end])
		} else {
			h.Write(data[:end])
		}
		if !ok || mp != wp || mf != sumHex(h) || mn != end {
			t.Errorf("%+v: mapped (%q, %q, %d, %v), want (%q, %q, %d)", c, mp, mf, mn, ok, wp, sumHex(h), end)
		}
	}
}

// A refresh whose resume point did not move leaves resume.bin as it was
// (its inode stays: no rewrite of the state it read), and the next
// refresh resumes from it.
func TestKeptPointNotRewritten(t *testing.T) {
	full, ends := marotLines(t)
	file := filepath.Join(t.TempDir(), "s.jsonl")
	opts := Options{CacheDir: t.TempDir()}
	ctx := context.Background()
	inode := func(dir string) uint64 {
		st, err := os.Stat(filepath.Join(dir, resumeFile))
		if err != nil {
			t.Fatal(err)
		}
		return st.Sys().(*syscall.Stat_t).Ino
	}
	kept := 0
	for k := len(ends) / 2; k < len(ends) && kept < 3; k++ {
		if err := os.WriteFile(file, full[:ends[k]], 0o644); err != nil {
			t.Fatal(err)
		}
		var dir string
		var before state
		var ino uint64
		if k > len(ends)/2 {
			dir = EntryDir(opts.CacheDir, file)
			before, _ = readState(dir)
			ino = inode(dir)
		}
		e, err := openClosed(ctx, file, opts)
		if err != nil {
			t.Fatal(err)
		}
		if e.Update != Appended || before.Resume == nil {
			continue
		}
		after, ok := readState(dir)
		if !ok || after.Resume == nil {
			t.Fatal("no resume point after the refresh")
		}
		if after.Resume.Offset == before.Resume.Offset {
			kept++
			if inode(dir) != ino || after.Resume.StateXXH64 != before.Resume.StateXXH64 {
				t.Fatalf("after %d lines: the point stayed, resume.bin was written again", k+1)
			}
		}
	}
	if kept == 0 {
		t.Fatal("no refresh kept its resume point")
	}
}
