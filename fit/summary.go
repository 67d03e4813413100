// This file holds the summary calls the steps make: their call budget and
// deadline, chunking to the summarizer's window, and the on-disk cache.

package fit

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/summarize"
	"github.com/ctxfold/ctxfold/transcript"
)

// ---- summary calls: budget, chunks, cache ----

// summary summarizes nodes within the preparation's call budget and
// deadline, in chunks of at most ChunkTokens. ok is false when no summary
// could be had; the step then leaves the content as it is.
func (f *fitter) summary(kind string, nodes []*transcript.Node) (string, bool) {
	key := f.cacheKey(kind, nodes)
	if s, ok := f.cacheGet(key); ok {
		f.rep.CacheHits++
		return s, true
	}
	chunk := f.opts.ChunkTokens
	for {
		parts, err := f.chunks(nodes, chunk)
		if err != nil {
			f.fail(err)
			return "", false
		}
		var out []string
		overflow := false
		for _, part := range parts {
			s, err := f.call(part)
			if errors.Is(err, summarize.ErrContextLength) && chunk/2 >= minChunkTokens {
				overflow = true
				break
			}
			if err != nil {
				f.fail(err)
				return "", false
			}
			// One chunk of a long output may hold nothing worth keeping
			// (an extractive summary of it is empty); the others still
			// summarize the whole.
			if s != "" {
				out = append(out, s)
			}
		}
		if overflow {
			chunk /= 2
			continue
		}
		if len(out) == 0 {
			f.fail(errors.New("empty summary"))
			return "", false
		}
		s := strings.Join(out, "\n")
		f.cachePut(key, s)
		return s, true
	}
}

// call makes one summary call, or refuses once the call budget or the
// deadline is spent.
func (f *fitter) call(nodes []*transcript.Node) (string, error) {
	if f.stop != "" {
		return "", errors.New(f.stop)
	}
	if f.calls >= f.opts.MaxCalls {
		f.stop = fmt.Sprintf("summary call budget spent (%d calls)", f.opts.MaxCalls)
		return "", errors.New(f.stop)
	}
	if f.sumCtx == nil {
		// The first call always starts: the deadline begins with it.
		f.startDeadline()
	} else if f.sumCtx.Err() != nil {
		f.stop = fmt.Sprintf("summary deadline passed (%s)", f.opts.Deadline)
		return "", errors.New(f.stop)
	}
	summarizer := f.opts.Summarizer
	used := func() int { return 1 }
	if l, ok := summarizer.(summarize.Limiter); ok {
		// It retries and chunks on its own: hand it only what is left of
		// this preparation's calls and time.
		deadline, _ := f.sumCtx.Deadline()
		summarizer, used = l.Limited(f.opts.MaxCalls-f.calls, deadline)
	}
	// Tool output goes unclipped: chunks sized it, and the summary is of
	// the whole result.
	s, err := summarizer.Summarize(f.sumCtx, summarize.Request{Nodes: nodes, MaxTokens: f.opts.SummaryTokens, Encoding: f.encoding(), FullResults: true})
	// A call that made no provider call still counts, so a broken
	// summarizer cannot loop.
	f.calls += max(used(), 1)
	f.calls = min(f.calls, f.opts.MaxCalls)
	f.rep.SummaryCalls = f.calls
	if err != nil && f.sumCtx.Err() != nil {
		f.stop = fmt.Sprintf("summary deadline passed (%s)", f.opts.Deadline)
		return "", errors.New(f.stop)
	}
	return strings.TrimSpace(s), err
}

func (f *fitter) fail(err error) {
	msg := err.Error()
	for _, m := range f.rep.SummaryFailures {
		if m == msg {
			return
		}
	}
	f.rep.SummaryFailures = append(f.rep.SummaryFailures, msg)
}

// chunks splits nodes into summary calls of at most chunk tokens each; a
// single node longer than that is split by lines (whole text blocks).
func (f *fitter) chunks(nodes []*transcript.Node, chunk int) ([][]*transcript.Node, error) {
	enc := f.encoding()
	var out [][]*transcript.Node
	var cur []*transcript.Node
	size := 0
	flush := func() {
		if len(cur) > 0 {
			out = append(out, cur)
			cur, size = nil, 0
		}
	}
	for _, n := range nodes {
		t, err := estimate.Text(enc, summarize.TranscriptFull([]*transcript.Node{n}))
		if err != nil {
			return nil, err
		}
		if t <= chunk {
			if size+t > chunk {
				flush()
			}
			cur, size = append(cur, n), size+t
			continue
		}
		flush()
		pieces, err := splitText(enc, n.Content.PlainText(), chunk)
		if err != nil {
			return nil, err
		}
		for _, p := range pieces {
			c := *n
			c.Content = transcript.TextContent(p)
			c.Content.IsBlocks = false
			out = append(out, []*transcript.Node{&c})
		}
	}
	flush()
	return out, nil
}

// splitText cuts text at line boundaries into pieces of at most limit
// tokens (a single longer line is cut by bytes).
func splitText(enc, text string, limit int) ([]string, error) {
	lines := strings.SplitAfter(text, "\n")
	var out []string
	var b strings.Builder
	size := 0
	for _, ln := range lines {
		t, err := estimate.Text(enc, ln)
		if err != nil {
			return nil, err
		}
		for t > limit {
			// An overlong line: cut it proportionally, on a rune boundary.
			cut := len(ln) * limit / t
			for cut > 0 && cut < len(ln) && ln[cut]&0xC0 == 0x80 {
				cut--
			}
			if cut <= 0 {
				cut = len(ln)
			}
			if b.Len() > 0 {
				out = append(out, b.String())
				b.Reset()
				size = 0
			}
			out = append(out, ln[:cut])
			ln = ln[cut:]
			if t, err = estimate.Text(enc, ln); err != nil {
				return nil, err
			}
		}
		if size+t > limit && b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
			size = 0
		}
		b.WriteString(ln)
		size += t
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out, nil
}

func (f *fitter) encoding() string {
	if f.opts.Estimate.Encoding != "" {
		return f.opts.Estimate.Encoding
	}
	if b, err := estimate.Budget(f.opts.Estimate); err == nil {
		return b.Encoding
	}
	return estimate.O200kBase
}

func (f *fitter) cacheKey(kind string, nodes []*transcript.Node) string {
	h := sha256.New()
	fmt.Fprintf(h, "ctxfold-fit-v2\x00%s\x00%s\x00%s\x00%d\x00%d\x00%s\x00", kind, f.opts.Summarizer.Name(), f.opts.Summarizer.CacheKey(),
		f.opts.SummaryTokens, f.opts.ChunkTokens, f.encoding())
	h.Write([]byte(summarize.TranscriptFull(nodes)))
	return hex.EncodeToString(h.Sum(nil))
}

func (f *fitter) cacheGet(key string) (string, bool) {
	if f.opts.CacheDir == "" {
		return "", false
	}
	data, err := os.ReadFile(filepath.Join(f.opts.CacheDir, cacheDirName, key+".txt"))
	if err != nil || len(data) == 0 {
		return "", false
	}
	return string(data), true
}

// cachePut writes atomically (temp + rename) so concurrent fits never read
// a partial entry; any failure just leaves the cache cold.
func (f *fitter) cachePut(key, s string) {
	if f.opts.CacheDir == "" || s == "" {
		return
	}
	dir := filepath.Join(f.opts.CacheDir, cacheDirName)
	if os.MkdirAll(dir, 0o755) != nil {
		return
	}
	_ = store.WriteBytesAtomic(filepath.Join(dir, key+".txt"), store.AtomicOptions{}, []byte(s))
}
