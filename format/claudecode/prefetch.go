package claudecode

// This file reads and decodes the first pass's lines ahead of the planner,
// on every core: decoding a line needs nothing the planner decides, and it
// is most of the pass's work (docs/BENCHMARKS.md, "the cold path").

import (
	"io"

	"github.com/ctxfold/ctxfold/transcript"
)

// lineItem is one line as lineReader.next returned it, decoded.
type lineItem struct {
	body []byte
	// off is where the line starts, end where the next one does; line is
	// its 1-based number.
	off, end int64
	line     int
	complete bool
	// err is next's error (a line over the limit, a read error): the
	// planner returns it when it reaches the line.
	err error
	// blank: nothing but white space (not decoded).
	blank  bool
	rec    record
	decErr error
	// badUTF8 is transcript.FirstInvalidUTF8 of a line that decoded.
	badUTF8 int
}

func (it *lineItem) decode() {
	if it.err != nil {
		return
	}
	if len(trimSpace(it.body)) == 0 {
		it.blank = true
		return
	}
	ascii, err := decodeFirst(it.body, &it.rec)
	if it.decErr = err; err == nil {
		if !ascii {
			it.badUTF8 = transcript.FirstInvalidUTF8(it.body)
		}
		it.rec.scanContent()
	}
}

// lineBatch is a run of consecutive lines.
type lineBatch struct {
	items []lineItem
}

// Batches end at batchLines lines or batchBytes bytes, whichever first.
const (
	batchLines = 128
	batchBytes = 256 << 10
)

// startPrefetch reads lr's lines on one goroutine and decodes them on
// GOMAXPROCS workers; next gives the batches in file order.
func startPrefetch(lr *lineReader) *ordered[*lineBatch] {
	batches := func(yield func(*lineBatch) bool) {
		for {
			b, last := readBatch(lr)
			if len(b.items) > 0 && !yield(b) {
				return
			}
			if last {
				return
			}
		}
	}
	return startOrdered(1, batches, func(b *lineBatch) {
		for i := range b.items {
			b.items[i].decode()
		}
	})
}

// readBatch reads the next batch; last is true at the end of the file or
// at a line next refused (it ends the batch).
func readBatch(lr *lineReader) (b *lineBatch, last bool) {
	b = &lineBatch{}
	size := 0
	for len(b.items) < batchLines && size < batchBytes {
		body, off, complete, err := lr.next()
		if err == io.EOF {
			return b, true
		}
		b.items = append(b.items, lineItem{body: body, off: off, end: lr.off, line: lr.line, complete: complete, err: err})
		if err != nil {
			return b, true
		}
		size += len(body)
	}
	return b, false
}
