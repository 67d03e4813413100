package estimate

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
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
	mu      sync.Mutex
	entries map[cacheKey]parts
	added   int
}

// loadCache reads dir's cache. A missing file is an empty cache; an
// unreadable or corrupt one is an empty cache plus a warning.
func loadCache(dir string, warn func(string)) *countCache {
	c := &countCache{path: filepath.Join(dir, CacheFile), entries: map[cacheKey]parts{}}
	data, err := os.ReadFile(c.path)
	if errors.Is(err, fs.ErrNotExist) {
		return c
	}
	if err != nil {
		warn(fmt.Sprintf("%s: ignored (%v); counts are recomputed", c.path, err))
		return c
	}
	if err := c.decode(data); err != nil {
		c.entries = map[cacheKey]parts{}
		warn(fmt.Sprintf("%s: ignored, %v; counts are recomputed and the cache rewritten", c.path, err))
	}
	return c
}

func (c *countCache) decode(data []byte) error {
	if len(data) < len(cacheMagic)+8 || !bytes.Equal(data[:len(cacheMagic)], cacheMagic) {
		return errors.New("not a count cache (bad header)")
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return errors.New("checksum mismatch (corrupt)")
	}
	n := binary.LittleEndian.Uint32(body[len(cacheMagic):])
	rest := body[len(cacheMagic)+4:]
	if uint64(len(rest)) != uint64(n)*cacheEntrySize {
		return errors.New("truncated")
	}
	c.entries = make(map[cacheKey]parts, n)
	for i := 0; i < int(n); i++ {
		e := rest[i*cacheEntrySize : (i+1)*cacheEntrySize]
		var k cacheKey
		copy(k[:], e[:16])
		v := e[16:]
		u := func(j int) int32 { return int32(binary.LittleEndian.Uint32(v[j*4:])) }
		c.entries[k] = parts{Text: u(0), Thinking: u(1), Calls: u(2), Results: u(3), Images: u(4), ToolDefs: u(5), Overhead: u(6),
			Measured: int64(binary.LittleEndian.Uint64(v[28:]))}
	}
	return nil
}

// get is safe for concurrent use with other gets (the map is not written
// while workers run).
func (c *countCache) get(k cacheKey) (parts, bool) {
	p, ok := c.entries[k]
	return p, ok
}

// put records new counts after the workers are done.
func (c *countCache) put(k cacheKey, p parts) {
	c.mu.Lock()
	if _, ok := c.entries[k]; !ok {
		c.added++
	}
	c.entries[k] = p
	c.mu.Unlock()
}

// save rewrites the cache when something was added.
func (c *countCache) save() error {
	if c.added == 0 {
		return nil
	}
	buf := make([]byte, 0, len(cacheMagic)+8+len(c.entries)*cacheEntrySize)
	buf = append(buf, cacheMagic...)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(c.entries)))
	for k, p := range c.entries {
		buf = append(buf, k[:]...)
		for _, v := range []int32{p.Text, p.Thinking, p.Calls, p.Results, p.Images, p.ToolDefs, p.Overhead} {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(v))
		}
		buf = binary.LittleEndian.AppendUint64(buf, uint64(p.Measured))
	}
	buf = binary.LittleEndian.AppendUint32(buf, crc32.ChecksumIEEE(buf))
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
	if _, err := tmp.Write(buf); err != nil {
		tmp.Close()
		return err
	}
	// No fsync: a cache lost in a crash is only recomputed; a torn one
	// fails its checksum and is ignored.
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), c.path); err != nil {
		return err
	}
	c.added = 0
	return nil
}
