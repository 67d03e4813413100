package estimate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/ctxfold/ctxfold/transcript"
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

// rulesVersion changes whenever counting rules change, invalidating every
// stored Result.
const rulesVersion = "estimate-rules-1"

// resultVersion changes whenever the stored Result's fields or the model
// table change (not the per-node counts): the calibration model and the
// budget basis came in result-2.
const resultVersion = "result-2"

type viewCache struct {
	Key    string  `json:"key"`
	Result *Result `json:"result"`
}

// ViewCacheKey fingerprints a session directory and the inputs of one
// measurement (opts and any extra strings the caller resolves them from,
// such as a --head or a fallback model). It fails when the session cannot
// be read; callers then simply measure.
func ViewCacheKey(dir string, opts Options, extra ...string) (string, error) {
	meta, err := transcript.ReadRegularFile(filepath.Join(dir, transcript.MetaFile))
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write([]byte(rulesVersion + "/" + resultVersion))
	h.Write([]byte{0})
	h.Write(meta)
	st, err := os.Stat(filepath.Join(dir, transcript.NodesFile))
	switch {
	case err == nil:
		var b [16]byte
		putInt64(b[:8], st.Size())
		putInt64(b[8:], st.ModTime().UnixNano())
		h.Write(b[:])
	case !errors.Is(err, fs.ErrNotExist):
		return "", err
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
		return "", err
	}
	h.Write([]byte{0})
	h.Write(inputs)
	return hex.EncodeToString(h.Sum(nil)), nil
}

func putInt64(b []byte, v int64) {
	for i := 0; i < 8; i++ {
		b[i] = byte(v >> (8 * i))
	}
}

// CachedView returns the Result stored under key, if any. A missing,
// corrupt or stale file is a miss.
func CachedView(dir, key string) (*Result, bool) {
	data, err := os.ReadFile(CachePath(dir, ViewCacheFile))
	if err != nil {
		return nil, false
	}
	var vc viewCache
	dec := json.NewDecoder(bytes.NewReader(data))
	if dec.Decode(&vc) != nil || vc.Key != key || vc.Result == nil || vc.Result.Categories == nil {
		return nil, false
	}
	return vc.Result, true
}

// StoreView stores res under key (temp file + rename). A read-only
// session is simply not cached; other failures are returned for a
// warning.
func StoreView(dir, key string, res *Result) error {
	data, err := json.Marshal(viewCache{Key: key, Result: res})
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
	if err := transcript.WriteBytesAtomic(filepath.Join(cd, ViewCacheFile), transcript.AtomicOptions{}, data); err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return nil
		}
		return err
	}
	removeLegacy(dir, LegacyViewCacheFile)
	return nil
}
