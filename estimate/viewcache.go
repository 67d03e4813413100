package estimate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"sort"

	"github.com/ctxfold/ctxfold/store"
)

// ViewCacheFile holds the last Result computed for a session, so that
// measuring an unchanged session again reads two small files instead of
// indexing nodes.jsonl. Like CacheFile it is safe to delete and replaced
// atomically. Its key covers everything a Result depends on: session.json's
// bytes (HEAD, the active summary, the committed length), nodes.jsonl's
// size and modification time, the caller's inputs and the counting rules'
// version — a persisted compaction changes session.json even though HEAD
// does not move (docs/ESTIMATE.md), so it is never served a stale result.
const ViewCacheFile = "estimate.view"

// RulesVersion changes whenever counting rules change, invalidating every
// stored Result (and every measure a cache outside the session keeps:
// projectprefix's memo).
const RulesVersion = "estimate-rules-6"

// resultVersion changes whenever the stored Result's fields or the model
// table change (not the per-node counts): the calibration model and the
// budget basis came in result-2.
const resultVersion = "result-4"

type viewCache struct {
	Key    string  `json:"key"`
	Result *Result `json:"result"`
	// Basis lets the next run after an append measure only the new nodes
	// (incremental.go); absent when the session was in no state to start
	// from.
	Basis *incrBasis `json:"basis,omitempty"`
}

// ViewCacheKey fingerprints a session directory and the inputs of one
// measurement (opts and any extra strings the caller resolves them from,
// such as a --head or a fallback model). It fails when the session cannot
// be read; callers then simply measure.
func ViewCacheKey(dir string, opts Options, extra ...string) (string, error) {
	k, err := viewCacheKey(dir, opts, extra...)
	return k.key, err
}

// viewKey is a view cache key and the parts an incremental run reuses.
type viewKey struct {
	key    string
	meta   []byte
	inputs []byte
}

func viewCacheKey(dir string, opts Options, extra ...string) (viewKey, error) {
	meta, err := store.ReadMetaBytes(dir)
	if err != nil {
		return viewKey{}, err
	}
	h := sha256.New()
	h.Write([]byte(RulesVersion + "/" + resultVersion))
	h.Write([]byte{0})
	h.Write(meta)
	st, err := store.StatNodes(dir)
	switch {
	case err == nil:
		var b [16]byte
		putInt64(b[:8], st.Size())
		putInt64(b[8:], st.ModTime().UnixNano())
		h.Write(b[:])
	case !errors.Is(err, fs.ErrNotExist):
		return viewKey{}, err
	}
	names := make([]string, 0, len(opts.Models))
	for n := range opts.Models {
		names = append(names, n)
	}
	sort.Strings(names)
	models := make([]Model, 0, len(names))
	for _, n := range names {
		m := opts.Models[n]
		m.Name = n
		models = append(models, m)
	}
	inputs, err := json.Marshal(struct {
		Model, Encoding              string
		Window, MaxOutput, OutputCap int
		CompactAt                    float64
		NodeDetail, NoCalibrate      bool
		Models                       []Model
		Extra                        []string
	}{opts.Model, opts.Encoding, opts.Window, opts.MaxOutput, opts.OutputCap, opts.CompactAt, opts.NodeDetail, opts.NoCalibrate, models, extra})
	if err != nil {
		return viewKey{}, err
	}
	h.Write([]byte{0})
	h.Write(inputs)
	return viewKey{key: hex.EncodeToString(h.Sum(nil)), meta: meta, inputs: inputs}, nil
}

func putInt64(b []byte, v int64) {
	for i := 0; i < 8; i++ {
		b[i] = byte(v >> (8 * i))
	}
}

// CachedView returns the Result stored under key, if any. A missing,
// corrupt or stale file is a miss.
func CachedView(dir, key string) (*Result, bool) {
	vc, ok := readViewCache(dir)
	if !ok || vc.Key != key {
		return nil, false
	}
	return vc.Result, true
}

// readViewCache reads the stored view, whatever its key.
func readViewCache(dir string) (*viewCache, bool) {
	data, err := store.ReadCacheFile(CachePath(dir, ViewCacheFile), maxCacheRead)
	if err != nil {
		return nil, false
	}
	var vc viewCache
	dec := json.NewDecoder(bytes.NewReader(data))
	if dec.Decode(&vc) != nil || vc.Result == nil || vc.Result.Categories == nil {
		return nil, false
	}
	return &vc, true
}

// StoreView stores res under key (temp file + rename). A read-only
// session is simply not cached; other failures are returned for a
// warning.
func StoreView(dir, key string, res *Result) error {
	return storeView(dir, viewCache{Key: key, Result: res}, nil)
}

// storeView stores vc, and sidecar (encodeSidecar's) before it when vc
// has a basis; the sidecar names vc's key, so a pair torn by concurrent
// runs is a miss.
func storeView(dir string, vc viewCache, sidecar []byte) error {
	data, err := json.Marshal(vc)
	if err != nil {
		return err
	}
	cd, err := ensureCacheDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return nil
		}
		return err
	}
	// A cache: no fsync, a lost one is only cold.
	if vc.Basis != nil {
		if err := store.WriteBytesAtomic(filepath.Join(cd, IncrementalFile), store.AtomicOptions{}, sidecar); err != nil {
			if errors.Is(err, fs.ErrPermission) {
				return nil
			}
			return err
		}
	}
	if err := store.WriteBytesAtomic(filepath.Join(cd, ViewCacheFile), store.AtomicOptions{}, data); err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return nil
		}
		return err
	}
	removeLegacy(dir, LegacyViewCacheFile)
	return nil
}
