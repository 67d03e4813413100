// This file holds the counting of stored nodes: runs of consecutive lines
// read at once, the per-node count cache, and the worker pool.

package estimate

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/ctxfold/ctxfold/store"
)

const (
	// countBatch is how many nodes a goroutine takes at a time.
	countBatch = 128
	// runBytes bounds one read of consecutive lines.
	runBytes = 4 << 20
)

// countStored counts the stored nodes idx (no index repeated) on nw
// goroutines through the count cache, and hands each count to visit with
// the goroutine's number w < nw, the position k in idx and the node index
// i. A node whose cache entry matches its line costs no BPE work. Lines and
// cache entries are read a run of consecutive nodes at a time, so memory
// does not grow with the session.
func countStored(ctx context.Context, s *store.Session, idx []int, b BudgetInfo, opts Options, nw int, visit func(w, k, i int, p parts)) error {
	warn := opts.Warn
	if warn == nil {
		warn = func(string) {}
	}
	if opts.Counting != nil {
		opts.Counting(len(idx))
	}
	profile := profileOf(b)
	sc := &storedCount{s: s, idx: idx, b: b, opts: opts, visit: visit}
	if !opts.NoCache {
		sc.cache = openCache(s.Dir, profile, s.Len(), warn)
		sc.visited = make([]bool, s.Len())
	}
	sc.bufs = make([]storedBuffers, nw)
	for w := range sc.bufs {
		sc.bufs[w].keys = newKeyer(profile)
	}
	err := parallelBatches(ctx, len(idx), nw, countBatch, b.Encoding, sc.batch)
	if sc.cache != nil {
		sc.cache.damaged = sc.damaged.Load()
		if err != nil {
			sc.cache.abort()
		} else {
			sc.cache.finish(sc.visited, sc.changed.Load(), sc.writeErr)
		}
	}
	return err
}

// storedCount is the state of one countStored pass shared by its workers:
// each worker uses only its own bufs entry and disjoint entries of visited,
// so only the flags and the first write error need synchronizing.
type storedCount struct {
	s     *store.Session
	idx   []int
	b     BudgetInfo
	opts  Options
	visit func(w, k, i int, p parts)
	cache *countCache
	// visited marks the nodes whose entry this pass wrote, for the cache's
	// finish.
	visited      []bool
	changed      atomic.Bool
	damaged      atomic.Int64
	writeErr     error
	writeErrOnce sync.Once
	bufs         []storedBuffers
}

// storedBuffers are one worker's reused buffers, so that memory stays
// bounded by a run, not the session.
type storedBuffers struct {
	lines, entries []byte
	keys           *keyer
}

// batch counts idx[k0:k1] on worker w, one run of consecutive lines at a
// time.
func (sc *storedCount) batch(w int, lc *lazyCounter, k0, k1 int) error {
	if sc.opts.Counted != nil {
		defer sc.opts.Counted(k1 - k0)
	}
	for k := k0; k < k1; {
		j, err := sc.run(w, lc, k, k1)
		if err != nil {
			return err
		}
		k = j
	}
	return nil
}

// run counts idx[k:j], the longest run from k (before k1) of consecutive
// nodes whose lines fit in runBytes, with one read of the lines and of
// their cache entries, and returns j.
func (sc *storedCount) run(w int, lc *lazyCounter, k, k1 int) (int, error) {
	s, idx, buf := sc.s, sc.idx, &sc.bufs[w]
	first := idx[k]
	_, size := s.LineSpan(first)
	j := k + 1
	for ; j < k1 && idx[j] == idx[j-1]+1; j++ {
		_, l := s.LineSpan(idx[j])
		if size+l > runBytes {
			break
		}
		size += l
	}
	data, err := s.ReadLines(first, idx[j-1], buf.lines)
	if err != nil {
		return 0, err
	}
	buf.lines = data
	base, _ := s.LineSpan(first)
	n := j - k
	var entries []byte
	oldN := 0
	if sc.cache != nil {
		if cap(buf.entries) < n*cacheEntrySize {
			buf.entries = make([]byte, countBatch*cacheEntrySize)
		}
		entries = buf.entries[:n*cacheEntrySize]
		oldN = sc.cache.readOld(first, entries)
	}
	for r := range n {
		i := first + r
		off, l := s.LineSpan(i)
		line := data[off-base : off-base+int64(l)]
		p, err := sc.line(buf, lc, i, line, entries, r, oldN)
		if err != nil {
			return 0, err
		}
		sc.visit(w, k+r, i, p)
	}
	if sc.cache != nil {
		if err := sc.cache.writeNew(first, entries); err != nil {
			sc.writeErrOnce.Do(func() { sc.writeErr = err })
		}
	}
	return j, nil
}

// line returns the parts of node i from its stored line: from cache entry r
// of the run when the first oldN entries hold an intact one for the same
// line, otherwise by decoding and counting it. With a cache, entry r is
// rewritten either way, so the new cache file holds every visited node.
func (sc *storedCount) line(buf *storedBuffers, lc *lazyCounter, i int, line, entries []byte, r, oldN int) (parts, error) {
	var p parts
	hit := false
	var key cacheKey
	if sc.cache != nil {
		key = buf.keys.key(line)
		e := entries[r*cacheEntrySize : (r+1)*cacheEntrySize]
		if r < oldN {
			if k2, p2, ok := entryOf(e); ok && k2 == key {
				p, hit = p2, true
			} else if !ok && !allZero(e) {
				sc.damaged.Add(1)
			}
		}
	}
	if !hit {
		node, err := sc.s.DecodeLine(i, line)
		if err != nil {
			return parts{}, err
		}
		c, err := lc.get()
		if err != nil {
			return parts{}, err
		}
		p = countNode(c, sc.b.Provider, node)
		bpeNodes.Add(1)
		sc.changed.Store(true)
	}
	if sc.cache != nil {
		putEntry(entries[r*cacheEntrySize:], key, p)
		sc.visited[i] = true
	}
	return p, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// bpeNodes counts stored nodes tokenized (cache misses); tests read it to
// prove a warm run does no BPE work.
var bpeNodes atomic.Int64

// lazyCounter gives a worker its counter on first use, so a run served
// entirely from the cache never loads a rank table.
type lazyCounter struct {
	enc string
	c   *counter
}

func (l *lazyCounter) get() (*counter, error) {
	if l.c == nil {
		c, err := getCounter(l.enc)
		if err != nil {
			return nil, err
		}
		l.c = c
	}
	return l.c, nil
}

func (l *lazyCounter) release() {
	if l.c != nil {
		putCounter(l.c)
		l.c = nil
	}
}

// parallel runs fn for k in [0, n) on up to w goroutines, each with its
// own counter. The first error (or the context's) stops the rest.
func parallel(ctx context.Context, n, w int, enc string, fn func(lc *lazyCounter, k int) error) error {
	return parallelBatches(ctx, n, w, 32, enc, func(_ int, lc *lazyCounter, k0, k1 int) error {
		for k := k0; k < k1; k++ {
			if err := fn(lc, k); err != nil {
				return err
			}
		}
		return nil
	})
}

// parallelBatches hands [0, n) out in batches of batch to up to w
// goroutines, numbered 0..w−1, each with its own counter, so the queue is
// not a bottleneck. The first error (or the context's) stops the rest.
func parallelBatches(ctx context.Context, n, w, batch int, enc string, fn func(worker int, lc *lazyCounter, k0, k1 int) error) error {
	if _, ok := tables[enc]; !ok {
		return &UnknownEncodingError{Name: enc}
	}
	if n == 0 {
		return nil
	}
	w = max(1, min(w, (n+batch-1)/batch))
	var next atomic.Int64
	var firstErr error
	var errOnce sync.Once
	var failed atomic.Bool
	setErr := func(err error) {
		errOnce.Do(func() { firstErr = err })
		failed.Store(true)
	}
	var wg sync.WaitGroup
	for g := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lc := &lazyCounter{enc: enc}
			defer lc.release()
			for !failed.Load() {
				if err := ctx.Err(); err != nil {
					setErr(err)
					return
				}
				start := int(next.Add(int64(batch))) - batch
				if start >= n {
					return
				}
				if err := fn(g, lc, start, min(start+batch, n)); err != nil {
					setErr(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}
