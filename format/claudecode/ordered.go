package claudecode

// The pipeline both passes run on every core: the first pass's prefetch
// decodes lines ahead of the planner (prefetch.go), the second's builder
// builds nodes ahead of the emit loop (emitpar.go).

import (
	"iter"
	"runtime"
	"sync"
)

// ordered does work on each batch of a sequence on GOMAXPROCS workers and
// hands the batches back in the sequence's order, each once its work is
// done. At most a few batches per worker are in flight, so memory stays
// bounded.
type ordered[B any] struct {
	out  chan *job[B]
	stop chan struct{}
	wg   sync.WaitGroup
}

// job is one batch; done is closed once its work is done.
type job[B any] struct {
	b    B
	done chan struct{}
}

// startOrdered starts reading batches (on a goroutine of its own) and
// doing work on them; perWorker*GOMAXPROCS+2 batches may be read ahead.
func startOrdered[B any](perWorker int, batches iter.Seq[B], work func(B)) *ordered[B] {
	workers := runtime.GOMAXPROCS(0)
	depth := perWorker*workers + 2
	o := &ordered[B]{out: make(chan *job[B], depth), stop: make(chan struct{})}
	todo := make(chan *job[B], depth)
	for range workers {
		o.wg.Add(1)
		go func() {
			defer o.wg.Done()
			for j := range todo {
				work(j.b)
				close(j.done)
			}
		}()
	}
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		defer close(todo)
		defer close(o.out)
		for b := range batches {
			j := &job[B]{b: b, done: make(chan struct{})}
			select {
			case todo <- j:
			case <-o.stop:
				return
			}
			select {
			case o.out <- j:
			case <-o.stop:
				return
			}
		}
	}()
	return o
}

// next returns the next batch once its work is done; ok is false after
// the last.
func (o *ordered[B]) next() (b B, ok bool) {
	j, ok := <-o.out
	if !ok {
		return b, false
	}
	<-j.done
	return j.b, true
}

// close stops the reading and waits for the goroutines, so none is left
// reading a file or doing work once the caller is done.
func (o *ordered[B]) close() {
	close(o.stop)
	for range o.out {
	}
	o.wg.Wait()
}
