package store

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/ctxfold/ctxfold/transcript"
)

// Parallel indexing: decoding lines is nearly all the cost of Open, and
// lines are independent, so the committed bytes are cut into line-aligned
// chunks that workers decode while one goroutine (the caller) merges their
// refs in file order. Ids, duplicates, line numbers, offsets and the first
// error in file order are exactly what indexFrom alone gives: workers see
// only complete lines and report at most their chunk's first error; every
// case that depends on more than one line (the torn or unterminated last
// line, a line over max_line_bytes, a read error) is left to indexFrom,
// resumed at that line's start with the state merged so far.

// Knobs, unexported so that tests can force either path and small chunks.
var (
	// indexWorkersOverride, when > 0, replaces runtime.GOMAXPROCS as the
	// number of workers; 1 forces the sequential path.
	indexWorkersOverride = 0
	// indexParallelMin is the smallest file indexed in parallel: below it
	// starting goroutines costs more than it saves.
	indexParallelMin int64 = 1 << 20
	// indexChunkBytes is how much the reader reads per chunk.
	indexChunkBytes = 512 << 10
)

func indexWorkerCount(limit int64) int {
	if indexWorkersOverride > 0 {
		return indexWorkersOverride
	}
	if limit < indexParallelMin {
		return 1
	}
	return runtime.GOMAXPROCS(0)
}

// indexChunk is a run of complete lines, each ending in '\n', and what a
// worker made of it. Lines and offsets in refs and err are relative to the
// chunk (line 1 is its first line, offset 0 its first byte) until merged.
type indexChunk struct {
	data []byte
	// tail, on the last chunk sent, means "index from here on with
	// indexFrom": data is empty and the chunk is not decoded.
	tail    bool
	maxLine int
	done    chan struct{}
	refs    []NodeRef
	err     *transcript.ParseError
}

func (c *indexChunk) decode(path string) {
	defer close(c.done)
	data := c.data
	if lines := bytes.Count(data, []byte("\n")); cap(c.refs) < lines {
		c.refs = make([]NodeRef, 0, lines)
	}
	line := 0
	var offset int64
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		raw := data[:i+1]
		data = data[i+1:]
		line++
		body := raw[:i]
		// The chunk holds no line longer than the reader's bound, but the
		// limit may be lower than that: the same check as indexFrom's.
		if len(body) > c.maxLine {
			c.err = &transcript.ParseError{File: path, Line: line, Msg: lineTooLongMsg(c.maxLine)}
			return
		}
		body = bytes.TrimSuffix(body, []byte("\r"))
		ref, perr := parseLine(path, body, line, offset)
		if perr != nil {
			c.err = perr
			return
		}
		c.refs = append(c.refs, ref)
		offset += int64(len(raw))
	}
}

// indexPipeline is the plumbing of one indexParallel: the reader goroutine
// feeds chunks both to the workers (jobs) and, in file order, to the merge
// (order); quit tells both sides the merge has stopped; free and freeRefs
// recycle buffers so the reader does not allocate a chunk per read.
type indexPipeline struct {
	f        *os.File
	path     string
	limit    int64
	maxLine  int
	jobs     chan *indexChunk
	order    chan *indexChunk
	quit     chan struct{}
	free     chan []byte
	freeRefs chan []NodeRef
	wg       sync.WaitGroup
}

func newIndexPipeline(f *os.File, path string, limit int64, maxLine, workers int) *indexPipeline {
	inFlight := 2 * workers
	return &indexPipeline{
		f:        f,
		path:     path,
		limit:    limit,
		maxLine:  maxLine,
		jobs:     make(chan *indexChunk, inFlight),
		order:    make(chan *indexChunk, inFlight),
		quit:     make(chan struct{}),
		free:     make(chan []byte, inFlight+2),
		freeRefs: make(chan []NodeRef, inFlight+2),
	}
}

// start runs the workers and the reader.
func (p *indexPipeline) start(workers int) {
	p.wg.Add(workers)
	for range workers {
		go func() {
			defer p.wg.Done()
			for c := range p.jobs {
				select {
				case <-p.quit:
					close(c.done) // merged no more: skip the work
				default:
					c.decode(p.path)
				}
			}
		}()
	}
	p.wg.Add(1)
	go p.read()
}

// send queues c for the merge and, unless it is the tail, for a worker; it
// reports false once the merge has stopped.
func (p *indexPipeline) send(c *indexChunk) bool {
	select {
	case p.order <- c:
	case <-p.quit:
		return false
	}
	if c.tail {
		close(c.done)
		return true
	}
	select {
	case p.jobs <- c:
		return true
	case <-p.quit:
		return false
	}
}

// sendTail hands the rest of the file, from the merge's position on, to
// indexFrom.
func (p *indexPipeline) sendTail() {
	p.send(&indexChunk{tail: true, done: make(chan struct{})})
}

// read is the reader goroutine: it cuts the file into line-aligned chunks,
// carrying each read's partial last line over to the next chunk.
func (p *indexPipeline) read() {
	defer p.wg.Done()
	defer close(p.jobs)
	defer close(p.order)
	var pos int64 // file offset of carry[0]
	var carry []byte
	readTo := int64(0)
	for pos < p.limit {
		var buf []byte
		select {
		case buf = <-p.free:
		default:
		}
		buf = append(buf[:0], carry...)
		var ok bool
		buf, readTo, ok = p.fill(buf, readTo)
		if !ok {
			// A read error: indexFrom meets it again and reports it
			// as the sequential code does.
			p.sendTail()
			return
		}
		end := bytes.LastIndexByte(buf, '\n') + 1
		if end == 0 {
			// No line ends: the unterminated last line, or a line over
			// the limit. Both are indexFrom's.
			p.sendTail()
			return
		}
		carry = append(carry[:0], buf[end:]...)
		c := &indexChunk{data: buf[:end], done: make(chan struct{}), maxLine: p.maxLine}
		select {
		case c.refs = <-p.freeRefs:
		default:
		}
		if !p.send(c) {
			return
		}
		pos += int64(end)
		if readTo >= p.limit && len(carry) > 0 {
			p.sendTail()
			return
		}
	}
}

// fill reads one chunk's worth onto buf, after the carried partial line,
// and keeps reading while no line ends, up to the line limit. It reports
// false on a read error.
func (p *indexPipeline) fill(buf []byte, readTo int64) ([]byte, int64, bool) {
	for {
		want := min(int64(indexChunkBytes), p.limit-readTo)
		start := len(buf)
		buf = growLen(buf, int(want))
		n, err := p.f.ReadAt(buf[start:], readTo)
		buf = buf[:start+n]
		readTo += int64(n)
		if err != nil && !(err == io.EOF && int64(n) == want) {
			return buf, readTo, false
		}
		if bytes.IndexByte(buf[start:], '\n') >= 0 || readTo >= p.limit || len(buf) > p.maxLine+1 {
			return buf, readTo, true
		}
	}
}

// stop ends the pipeline early.
func (p *indexPipeline) stop() {
	close(p.quit)
	// Drain so the reader and the workers can finish and no goroutine
	// touches f after Open returns.
	for range p.order {
	}
	p.wg.Wait()
}

// recycle hands a merged chunk's buffers back to the reader.
func (p *indexPipeline) recycle(c *indexChunk) {
	if cap(c.data) <= 4*indexChunkBytes { // not a buffer grown for a huge line
		select {
		case p.free <- c.data:
		default:
		}
	}
	clear(c.refs) // the index keeps the strings, not this chunk's refs
	select {
	case p.freeRefs <- c.refs[:0]:
	default:
	}
	c.data, c.refs = nil, nil
}

// indexParallel is index on workers goroutines. It reads at most a few
// chunks ahead of the merge, so memory stays bounded whatever the file
// size.
func (s *Session) indexParallel(f *os.File, limit int64, committed bool, maxLine, workers int) error {
	p := newIndexPipeline(f, s.NodesPath(), limit, maxLine, workers)
	p.start(workers)
	var offset int64
	line := 0
	for c := range p.order {
		if s.openCtx != nil && s.openCtx.Err() != nil {
			p.stop()
			return s.openCtx.Err()
		}
		<-c.done
		if c.tail {
			p.stop()
			r := io.NewSectionReader(f, offset, limit-offset)
			return s.indexFrom(r, offset, line, indexBufSize(limit), committed, maxLine)
		}
		if c.err != nil {
			p.stop()
			c.err.Line += line
			return c.err
		}
		if err := s.mergeChunk(c, line, offset, limit); err != nil {
			p.stop()
			return err
		}
		line += len(c.refs) // no error: one ref per line
		offset += int64(len(c.data))
		p.recycle(c)
	}
	p.wg.Wait()
	s.CommittedBytes = offset
	s.unterminated = false
	return nil
}

// mergeChunk adds a decoded chunk's refs to the index, shifted from the
// chunk's own line numbers and offsets to the file's. The first chunk also
// sizes the index for the whole file.
func (s *Session) mergeChunk(c *indexChunk, line int, offset, limit int64) error {
	if line == 0 && len(c.refs) > 0 {
		ids, idBytes := 0, 0
		for k := range c.refs {
			ids += len(c.refs[k].ToolCallIDs) + len(c.refs[k].ResultIDs)
			idBytes += len(c.refs[k].ID)
		}
		s.presize(len(c.refs), ids, idBytes, len(c.data), limit)
	}
	for _, ref := range c.refs {
		ref.Line += line
		ref.Offset += offset
		if perr := s.addRef(ref); perr != nil {
			return perr
		}
	}
	return nil
}

// presize reserves the records, the id table and the id pool for the number of nodes the first chunk
// predicts, so that a big index does not grow (and copy) itself twenty
// times. The guess is capped; a file of longer lines later just grows.
func (s *Session) presize(nodes, ids, idBytes, size int, limit int64) {
	if len(s.recs) > 0 || size == 0 {
		return
	}
	est := int64(nodes) * limit / int64(size)
	est += est / 16
	// A first chunk of unusually short lines must not reserve far more
	// than the file can hold: no real node line is under 32 bytes.
	est = min(est, limit/32+1)
	s.recs = make([]refRec, 0, int(est))
	s.byID.reserve(s, int(est))
	// Tool ids the same way (a tool id takes at least 16 bytes of line).
	idEst := int64(ids) * limit / int64(size)
	idEst = min(idEst+idEst/16, limit/16+1)
	s.pool = make([]string, 0, int(idEst))
	arena := int64(idBytes) * limit / int64(size)
	s.ids = make([]byte, 0, min(arena+arena/16, limit))
}

func growLen(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		// Grow geometrically: a long line is read in many small steps.
		nb := make([]byte, len(b), max(2*cap(b), len(b)+n))
		copy(nb, b)
		b = nb
	}
	return b[:len(b)+n]
}

func lineTooLongMsg(maxLine int) string {
	return fmt.Sprintf("line is longer than the %d-byte limit (raise it with --max-line-bytes)", maxLine)
}
