package estimate

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// CacheFile is the per-node count cache inside a session directory. It is
// never needed for correctness: deleting it only costs the next run its BPE
// work. It is not part of the session (not written under the session lock):
// it is replaced atomically (temp file + rename), so concurrent runs can at
// worst lose each other's new entries, never corrupt the file or the
// session.
const CacheFile = "estimate.cache"

// Layout: magic, entry count, fixed-size entries, CRC-32 of everything
// before it. Any mismatch makes the whole file ignored.
var cacheMagic = []byte("CTXFEST1")

const cacheEntrySize = 16 + 7*4 + 8

type cacheKey [16]byte

// keyOf hashes a node's stored line together with what its count depends
// on (encoding and provider rules). A changed line is a different key, so
// a changed node is recounted.
func keyOf(profile string, line []byte) cacheKey {
	h := sha256.New()
	h.Write([]byte(profile))
	h.Write([]byte{0})
	h.Write(line)
	var sum [sha256.Size]byte
	var k cacheKey
	copy(k[:], h.Sum(sum[:0]))
	return k
}

type countCache struct {
	path    string
	entries map[cacheKey]parts
}

// fresh is a count made in this run, not yet in the file.
type fresh struct {
	k cacheKey
	p parts
}

// loadCache reads dir's cache, streaming (the file is never held whole in
// memory). A missing file is an empty cache; an unreadable or corrupt one
// is an empty cache plus a warning.
func loadCache(dir string, warn func(string)) *countCache {
	c := &countCache{path: filepath.Join(dir, CacheFile), entries: map[cacheKey]parts{}}
	f, err := os.Open(c.path)
	if errors.Is(err, fs.ErrNotExist) {
		return c
	}
	if err != nil {
		warn(fmt.Sprintf("%s: ignored (%v); counts are recomputed", c.path, err))
		return c
	}
	defer f.Close()
	if err := c.decode(f); err != nil {
		c.entries = map[cacheKey]parts{}
		warn(fmt.Sprintf("%s: ignored, %v; counts are recomputed and the cache rewritten", c.path, err))
	}
	return c
}

func (c *countCache) decode(f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	sum := crc32.NewIEEE()
	r := io.TeeReader(bufio.NewReaderSize(f, 1<<16), sum)
	head := make([]byte, len(cacheMagic)+4)
	if _, err := io.ReadFull(r, head); err != nil || !bytes.Equal(head[:len(cacheMagic)], cacheMagic) {
		return errors.New("not a count cache (bad header)")
	}
	n := int64(binary.LittleEndian.Uint32(head[len(cacheMagic):]))
	if st.Size() != int64(len(head))+n*cacheEntrySize+4 {
		return errors.New("truncated")
	}
	c.entries = make(map[cacheKey]parts, n)
	var e [cacheEntrySize]byte
	for i := int64(0); i < n; i++ {
		if _, err := io.ReadFull(r, e[:]); err != nil {
			return errors.New("truncated")
		}
		var k cacheKey
		copy(k[:], e[:16])
		v := e[16:]
		u := func(j int) int32 { return int32(binary.LittleEndian.Uint32(v[j*4:])) }
		c.entries[k] = parts{Text: u(0), Thinking: u(1), Calls: u(2), Results: u(3), Images: u(4), ToolDefs: u(5), Overhead: u(6),
			Measured: int64(binary.LittleEndian.Uint64(v[28:]))}
	}
	want := sum.Sum32()
	var tail [4]byte
	if _, err := io.ReadFull(r, tail[:]); err != nil || binary.LittleEndian.Uint32(tail[:]) != want {
		return errors.New("checksum mismatch (corrupt)")
	}
	return nil
}

// get is safe for concurrent use (the map is only read while workers run).
func (c *countCache) get(k cacheKey) (parts, bool) {
	p, ok := c.entries[k]
	return p, ok
}

// save rewrites the cache with its entries plus news, streaming (news are
// misses, so no key repeats).
func (c *countCache) save(news []fresh) error {
	if len(news) == 0 {
		return nil
	}
	dir := filepath.Dir(c.path)
	tmp, err := os.CreateTemp(dir, "."+CacheFile+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	// Readable like the session's own files (CreateTemp makes 0600).
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	sum := crc32.NewIEEE()
	bw := bufio.NewWriterSize(tmp, 1<<16)
	w := io.MultiWriter(bw, sum)
	var e [cacheEntrySize]byte
	put := func(k cacheKey, p parts) {
		copy(e[:16], k[:])
		for j, v := range []int32{p.Text, p.Thinking, p.Calls, p.Results, p.Images, p.ToolDefs, p.Overhead} {
			binary.LittleEndian.PutUint32(e[16+4*j:], uint32(v))
		}
		binary.LittleEndian.PutUint64(e[16+28:], uint64(p.Measured))
		w.Write(e[:])
	}
	w.Write(cacheMagic)
	w.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(c.entries)+len(news))))
	for k, p := range c.entries {
		put(k, p)
	}
	for _, f := range news {
		put(f.k, f.p)
	}
	bw.Write(binary.LittleEndian.AppendUint32(nil, sum.Sum32()))
	if err := bw.Flush(); err != nil {
		tmp.Close()
		return err
	}
	// No fsync: a cache lost in a crash is only recomputed; a torn one
	// fails its checksum and is ignored.
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), c.path)
}
