package estimate

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/ctxfold/ctxfold/osfile"
	"github.com/ctxfold/ctxfold/store"
)

// CacheFile is the per-node count cache inside a session directory. It is
// never needed for correctness: deleting it only costs the next run its BPE
// work. It is not part of the session (not written under the session lock):
// it is replaced atomically (temp file + rename), or, by an incremental run
// after an append, extended in place (extendCounts: the new entries, then
// the header that counts them), so concurrent runs can at worst lose each
// other's new entries, never corrupt the file or the session.
//
// Entries are positional: entry i of a profile's section belongs to the
// node at index i (file order), and holds a hash of that node's stored
// line, so a node whose line changed is a miss and is recounted. Being
// positional, the cache is read and written in step with the nodes, a run
// of entries at a time, and is never held whole in memory.
const CacheFile = "estimate"

// maxCacheRead bounds a cache file read whole (the view, the incremental
// sidecar): a bigger one is not what estimate wrote and is recomputed
// (docs/LIVE.md, "Hostile files": a cache file is never read without bound).
const maxCacheRead = 1 << 30

// CacheDir is the directory of a session's caches, DIR/cache/
// (docs/FORMAT.md §1); CacheFile and ViewCacheFile live in it.
const CacheDir = "cache"

// LegacyCacheFile and LegacyViewCacheFile are where earlier versions kept
// the caches, at the top of the session directory. An existing legacy
// count cache is read once, when cache/ has none yet; both are removed once
// their replacement is in cache/.
const (
	LegacyCacheFile     = "estimate.cache"
	LegacyViewCacheFile = "estimate.cache.view"
)

// CachePath is the path of the cache file name of the session dir.
func CachePath(dir, name string) string { return filepath.Join(dir, CacheDir, name) }

// ensureCacheDir creates DIR/cache/ when missing and returns its path. A
// cache/ that is a symlink or not a directory is refused: a cache is never
// written through a symlink.
func ensureCacheDir(dir string) (string, error) {
	cd := filepath.Join(dir, CacheDir)
	if err := os.Mkdir(cd, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	st, err := os.Lstat(cd)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is not a directory (a symlink or a file); caches are not written through it", cd)
	}
	return cd, nil
}

// removeLegacy removes a cache file of an earlier version once its
// replacement is written.
func removeLegacy(dir, name string) {
	_ = os.Remove(filepath.Join(dir, name))
}

// Layout (little endian):
//
//	magic "CTXFEST2"
//	u32 section count
//	per section: u16 profile length, profile, u32 entry count
//	u32 CRC-32 of the header so far
//	the entries of each section in turn, each cacheEntrySize bytes:
//	key [16], 7 × i32 counts, i64 measured, u32 CRC-32 of the entry
//
// A bad header makes the file ignored; a bad entry is a miss.
var cacheMagic = []byte("CTXFEST2")

// oldCacheMagic starts the files of earlier versions (one map of entries
// keyed by hash): replaced without a warning, as an absent cache.
var oldCacheMagic = []byte("CTXFEST1")

var errOldCache = errors.New("an earlier version's cache")

const (
	cacheEntrySize = 16 + 7*4 + 8 + 4
	// cacheProfiles is how many profiles (encoding × provider rules) one
	// file keeps, the latest used first.
	cacheProfiles = 4
)

type cacheKey [16]byte

const measuredMask = 1<<40 - 1

// overheadMask keeps a cache entry's overhead (its word's low 24 bits).
const overheadMask = 1<<24 - 1

// keyer hashes nodes' stored lines together with what their counts depend
// on (encoding and provider rules: the profile), reusing its SHA-256
// state, so a goroutine keys a million lines without allocating.
type keyer struct {
	h      hash.Hash
	prefix []byte
	sum    []byte
}

func newKeyer(profile string) *keyer {
	return &keyer{h: sha256.New(), prefix: append([]byte(profile), 0), sum: make([]byte, 0, sha256.Size)}
}

func (k *keyer) key(line []byte) cacheKey {
	k.h.Reset()
	k.h.Write(k.prefix)
	k.h.Write(line)
	k.sum = k.h.Sum(k.sum[:0])
	var out cacheKey
	copy(out[:], k.sum)
	return out
}

func putEntry(e []byte, k cacheKey, p parts) {
	copy(e[:16], k[:])
	for j, v := range [...]int32{p.Text, p.Thinking, p.Calls, p.Results, p.Images, p.ToolDefs, p.Overhead} {
		binary.LittleEndian.PutUint32(e[16+4*j:], uint32(v))
	}
	// The overhead (24 bits: one node's framing is tens of tokens) and the
	// answering model's tokenizer (8 bits) share one word.
	binary.LittleEndian.PutUint32(e[16+4*6:], uint32(p.Overhead)&overheadMask|uint32(p.Tokenizer)<<24)
	// The measured input (40 bits: a trillion tokens) and the hidden
	// output (24 bits) share one word.
	binary.LittleEndian.PutUint64(e[44:], uint64(p.Measured)&measuredMask|uint64(p.Hidden)<<40)
	binary.LittleEndian.PutUint32(e[52:], crc32.ChecksumIEEE(e[:52]))
}

// entryOf decodes an entry; ok is false when its checksum fails.
func entryOf(e []byte) (k cacheKey, p parts, ok bool) {
	if binary.LittleEndian.Uint32(e[52:]) != crc32.ChecksumIEEE(e[:52]) {
		return k, p, false
	}
	copy(k[:], e[:16])
	u := func(j int) int32 { return int32(binary.LittleEndian.Uint32(e[16+4*j:])) }
	p = parts{Text: u(0), Thinking: u(1), Calls: u(2), Results: u(3), Images: u(4), ToolDefs: u(5), Overhead: u(6) & overheadMask,
		Measured: int64(binary.LittleEndian.Uint64(e[44:]) & measuredMask), Hidden: int32(binary.LittleEndian.Uint64(e[44:]) >> 40),
		Tokenizer: uint8(uint32(u(6)) >> 24)}
	return k, p, true
}

type cacheSection struct {
	profile string
	count   int64
	start   int64 // file offset of entry 0
}

// countCache is one run's view of the cache: the old file, read a run of
// entries at a time, and the new one, written the same way.
type countCache struct {
	dir string
	// legacy: the old entries come from LegacyCacheFile.
	legacy  bool
	profile string
	warn    func(string)
	old     *os.File
	oldSecs []cacheSection
	ours    *cacheSection // this profile's section in old, if any
	// out is the replacement being written (nil: the directory is not
	// writable, so nothing is saved).
	out      *os.File
	outStart int64
	n        int64 // entries in the new section: the session's node count
	damaged  int64
}

// openCache opens dir's cache for profile and starts its replacement for a
// session of n nodes. A missing file is an empty cache; an unreadable or
// corrupt one is an empty cache plus a warning.
func openCache(dir, profile string, n int, warn func(string)) *countCache {
	c := &countCache{dir: dir, profile: profile, warn: warn, n: int64(n)}
	path := CachePath(dir, CacheFile)
	f, err := store.OpenCacheFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		// Read the counts an earlier version left at the top once; the
		// replacement goes to cache/ and the legacy file is removed.
		if lf, lerr := store.OpenCacheFile(filepath.Join(dir, LegacyCacheFile)); lerr == nil {
			path, f, err, c.legacy = filepath.Join(dir, LegacyCacheFile), lf, nil, true
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		warn(fmt.Sprintf("%s: ignored (%v); counts are recomputed", path, err))
	default:
		if err := c.readHeader(f); err != nil {
			f.Close()
			c.oldSecs, c.ours = nil, nil
			if errors.Is(err, errOldCache) {
				break
			}
			warn(fmt.Sprintf("%s: ignored, %v; counts are recomputed and the cache rewritten", path, err))
		} else {
			c.old = f
		}
	}
	c.startOutput()
	return c
}

func (c *countCache) readHeader(f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	// The header is small; 64 KiB holds hundreds of profiles.
	head := make([]byte, min(st.Size(), 64<<10))
	if _, err := io.ReadFull(f, head); err != nil {
		return err
	}
	if bytes.HasPrefix(head, oldCacheMagic) {
		return errOldCache
	}
	if len(head) < len(cacheMagic)+4 || !bytes.Equal(head[:len(cacheMagic)], cacheMagic) {
		return errors.New("not a count cache (bad header)")
	}
	at := len(cacheMagic)
	nsec := int(binary.LittleEndian.Uint32(head[at:]))
	at += 4
	var secs []cacheSection
	for range nsec {
		if at+2 > len(head) {
			return errors.New("truncated")
		}
		l := int(binary.LittleEndian.Uint16(head[at:]))
		at += 2
		if at+l+4 > len(head) {
			return errors.New("truncated")
		}
		secs = append(secs, cacheSection{profile: string(head[at : at+l]), count: int64(binary.LittleEndian.Uint32(head[at+l:]))})
		at += l + 4
	}
	if at+4 > len(head) || binary.LittleEndian.Uint32(head[at:]) != crc32.ChecksumIEEE(head[:at]) {
		return errors.New("checksum mismatch (corrupt)")
	}
	pos := int64(at + 4)
	for k := range secs {
		secs[k].start = pos
		pos += secs[k].count * cacheEntrySize
	}
	// Bytes past the sections are ignored: an incremental run extending
	// the file in place (extendCounts) writes its entries before the
	// header that counts them.
	if pos > st.Size() {
		return errors.New("truncated")
	}
	c.oldSecs = secs
	for k := range secs {
		if secs[k].profile == c.profile {
			c.ours = &secs[k]
		}
	}
	return nil
}

// startOutput creates the replacement file and writes its header: this
// profile's section first, then up to cacheProfiles−1 others kept from
// the old file (copied in finish).
func (c *countCache) startOutput() {
	cd, err := ensureCacheDir(c.dir)
	if err != nil {
		c.noteWriteError(err)
		return
	}
	tmp, err := os.CreateTemp(cd, "."+CacheFile+".tmp-*")
	if err != nil {
		c.noteWriteError(err)
		return
	}
	// Readable like the session's own files (CreateTemp makes 0600).
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		c.noteWriteError(err)
		return
	}
	secs := []cacheSection{{profile: c.profile, count: c.n}}
	for _, s := range c.oldSecs {
		if s.profile != c.profile && len(secs) < cacheProfiles {
			secs = append(secs, s)
		}
	}
	head := cacheHeader(secs)
	if _, err := tmp.Write(head); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		c.noteWriteError(err)
		return
	}
	c.out, c.outStart = tmp, int64(len(head))
}

// cacheHeader is the header listing secs (see Layout).
func cacheHeader(secs []cacheSection) []byte {
	head := append([]byte(nil), cacheMagic...)
	head = binary.LittleEndian.AppendUint32(head, uint32(len(secs)))
	for _, s := range secs {
		head = binary.LittleEndian.AppendUint16(head, uint16(len(s.profile)))
		head = append(head, s.profile...)
		head = binary.LittleEndian.AppendUint32(head, uint32(s.count))
	}
	return binary.LittleEndian.AppendUint32(head, crc32.ChecksumIEEE(head))
}

// noteWriteError warns about a cache that cannot be saved, except in a
// read-only session, which is simply not cached.
func (c *countCache) noteWriteError(err error) {
	if !errors.Is(err, fs.ErrPermission) && !errors.Is(err, syscall.EROFS) {
		c.warn("count cache not saved: " + err.Error())
	}
}

// readOld reads the old entries of nodes first..first+len(buf)/entry−1
// into buf, returning how many it read (those past the old section's end
// are not read).
func (c *countCache) readOld(first int, buf []byte) int {
	if c.old == nil || c.ours == nil || int64(first) >= c.ours.count {
		return 0
	}
	n := min(int64(len(buf)/cacheEntrySize), c.ours.count-int64(first))
	got, _ := c.old.ReadAt(buf[:n*cacheEntrySize], c.ours.start+int64(first)*cacheEntrySize)
	return got / cacheEntrySize
}

// writeNew writes the new entries of nodes first.. from buf.
func (c *countCache) writeNew(first int, buf []byte) error {
	if c.out == nil {
		return nil
	}
	_, err := c.out.WriteAt(buf, c.outStart+int64(first)*cacheEntrySize)
	return err
}

// finish completes the replacement: entries of nodes this run did not
// visit are carried over from the old file, the other profiles' sections
// copied, and the file renamed into place when anything changed.
// visited[i] tells whether node i's entry was written.
func (c *countCache) finish(visited []bool, changed bool, werr error) {
	defer c.abort() // closes both files; removing the temp is a no-op after the rename
	if c.damaged > 0 {
		c.warn(fmt.Sprintf("%s: %d damaged entries ignored; those nodes were recounted", CachePath(c.dir, CacheFile), c.damaged))
		changed = true
	}
	if c.out == nil {
		return
	}
	// Nothing new and this profile already first (the latest used): keep
	// the old file.
	if werr == nil && !changed && !c.legacy && c.ours != nil && c.ours == &c.oldSecs[0] && c.ours.count == c.n && c.carriesOthers() {
		return
	}
	err := werr
	if err == nil {
		err = c.carryOver(visited)
	}
	if err == nil {
		err = c.out.Close()
	}
	if err == nil {
		// No fsync: a cache lost in a crash is only recomputed; a torn one
		// fails its checksums and is ignored.
		err = os.Rename(c.out.Name(), CachePath(c.dir, CacheFile))
	}
	if err != nil {
		c.noteWriteError(err)
		return
	}
	if c.legacy {
		removeLegacy(c.dir, LegacyCacheFile)
	}
}

// carriesOthers reports whether the old file holds no profile beyond those
// the new one would keep (so rewriting it would change nothing).
func (c *countCache) carriesOthers() bool { return len(c.oldSecs) <= cacheProfiles }

// carryChunk is how many entries carryOver moves at a time: 230 KB, so an
// incremental run that writes a handful of entries copies a big cache in
// few reads and writes.
const carryChunk = 4096

func (c *countCache) carryOver(visited []bool) error {
	buf := make([]byte, carryChunk*cacheEntrySize)
	// This profile: unvisited nodes keep their old entries; past the old
	// section they are left zero, which fails its checksum (a miss).
	for i := 0; i < int(c.n); {
		if visited[i] {
			i++
			continue
		}
		j := i
		for j < int(c.n) && !visited[j] && j-i < carryChunk {
			j++
		}
		got := c.readOld(i, buf[:(j-i)*cacheEntrySize])
		if got > 0 {
			if err := c.writeNew(i, buf[:got*cacheEntrySize]); err != nil {
				return err
			}
		}
		i = j
	}
	// Other profiles, in the order the header lists them.
	at := c.outStart + c.n*cacheEntrySize
	kept := 1
	for _, s := range c.oldSecs {
		if s.profile == c.profile || kept >= cacheProfiles {
			continue
		}
		kept++
		if _, err := c.out.Seek(at, io.SeekStart); err != nil {
			return err
		}
		if _, err := io.Copy(c.out, io.NewSectionReader(c.old, s.start, s.count*cacheEntrySize)); err != nil {
			return err
		}
		at += s.count * cacheEntrySize
	}
	// The section of this profile must reach its declared size even when
	// its last nodes were neither visited nor in the old file.
	return c.out.Truncate(at)
}

// abort drops the replacement (a failed or canceled run saves nothing)
// and closes both files.
func (c *countCache) abort() {
	if c.old != nil {
		c.old.Close()
	}
	if c.out != nil {
		c.out.Close()
		os.Remove(c.out.Name())
	}
}

// extendCounts appends to dir's count cache, in place, the entries of the
// nodes from the cached count on: entries[i−from] for node i (nil: a
// miss, left zero). It does so only when the file holds profile's section
// alone and exactly from entries — the incremental run after an append,
// which would otherwise copy the whole file to add a turn's entries — and
// reports whether it did; else the caller replaces the file as before.
// The entries are written first, then the header's count: a run that
// stops in between leaves entries past the sections, which readers
// ignore and the next extension writes over.
func extendCounts(dir, profile string, from int, entries [][]byte) bool {
	path := CachePath(dir, CacheFile)
	f, err := osfile.OpenNoFollow(path, os.O_RDWR|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return false
	}
	c := &countCache{profile: profile}
	if c.readHeader(f) != nil || len(c.oldSecs) != 1 || c.ours == nil || c.ours.count != int64(from) {
		return false
	}
	block := make([]byte, len(entries)*cacheEntrySize)
	for k, e := range entries {
		copy(block[k*cacheEntrySize:], e)
	}
	if _, err := f.WriteAt(block, c.ours.start+int64(from)*cacheEntrySize); err != nil {
		return false
	}
	head := cacheHeader([]cacheSection{{profile: profile, count: int64(from + len(entries))}})
	if int64(len(head)) != c.ours.start {
		return false
	}
	_, err = f.WriteAt(head, 0)
	return err == nil
}
