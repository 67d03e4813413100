package projectprefix

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/store"
)

// The memo: what an earlier session's first request carried, kept in the
// cache directory by that file's path, size and modification time, so
// that the status line, called again and again on a fresh session before
// its first reply, imports each earlier session's head once rather than
// at every call (docs/BENCHMARKS.md, "projectprefix"). A file that changed
// (size or time) is measured again; a session with no first request is
// remembered as such. The memo is a cache: anything unreadable is none.
const (
	memoFile       = "project-prefix.json"
	maxMemoEntries = 256
	maxMemoBytes   = 1 << 20
)

// memoEntry is one earlier session's measure.
type memoEntry struct {
	Size    int64 `json:"size"`
	ModTime int64 `json:"mtime_ns"`
	Tokens  int   `json:"tokens"`
	OK      bool  `json:"ok"`
}

// memoKey names what the measure depends on: the file, the format it is
// read as, the kind of session it is measured as (main or sub-agent), the
// model it is counted for and how much of it is read.
func memoKey(abs, format, mode string, opts Options, limit int64) string {
	h := sha256.New()
	for _, s := range []string{abs, format, mode, opts.Session.Estimate.Model, opts.Session.DefaultModel} {
		io.WriteString(h, s)
		h.Write([]byte{0})
	}
	var n [8]byte
	for i := range n {
		n[i] = byte(limit >> (8 * i))
	}
	h.Write(n[:])
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// memoDoc is the memo file: the entries, and the rules of the build that
// measured them — the importers' output (live.StateVersion) and the
// counting (estimate.RulesVersion). A memo of other rules is none: an
// older build may have read less of such a file (Claude Code 2.1.2xx's
// attachments, before live state 7).
type memoDoc struct {
	Rules   string               `json:"rules"`
	Entries map[string]memoEntry `json:"entries"`
}

// memoRules is this build's rules.
var memoRules = fmt.Sprintf("%s/live-%d", estimate.RulesVersion, live.StateVersion)

// readMemo reads the memo file as every cache file is read
// (store.ReadCacheFile: a regular file, no symlink followed, bounded).
func readMemo(path string) map[string]memoEntry {
	var doc memoDoc
	if b, err := store.ReadCacheFile(path, maxMemoBytes); err == nil {
		_ = json.Unmarshal(b, &doc)
	}
	if doc.Rules != memoRules || doc.Entries == nil {
		return map[string]memoEntry{}
	}
	return doc.Entries
}

// writeMemo adds e under key and replaces the file atomically, keeping at
// most maxMemoEntries (the ones of the newest files).
func writeMemo(path, key string, e memoEntry) {
	known := readMemo(path)
	known[key] = e
	if len(known) > maxMemoEntries {
		keys := make([]string, 0, len(known))
		for k := range known {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return known[keys[i]].ModTime > known[keys[j]].ModTime })
		for _, k := range keys[maxMemoEntries:] {
			delete(known, k)
		}
	}
	b, err := json.Marshal(memoDoc{Rules: memoRules, Entries: known})
	if err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return
	}
	_ = store.WriteBytesAtomic(path, store.AtomicOptions{}, b)
}
