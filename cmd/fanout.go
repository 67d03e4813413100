package cmd

import (
	"context"
	"sync"
)

// ordered is the fan-out of the commands that take several sessions
// (estimate, verify): every argument runs in parallel, at most jobs at
// once, and the results are read back in argument order as soon as each
// one's turn comes, so output streams in order while later sessions are
// still being measured.
type ordered[T any] struct {
	out  []T
	done []chan struct{}
	wg   sync.WaitGroup
}

// fanOut starts work(i) for every i in [0, n). A run that has not started
// when ctx is cancelled gets cancelled(err) instead.
func fanOut[T any](ctx context.Context, n, jobs int, work func(i int) T, cancelled func(err error) T) *ordered[T] {
	o := &ordered[T]{out: make([]T, n), done: make([]chan struct{}, n)}
	sem := make(chan struct{}, max(jobs, 1))
	for i := range n {
		o.done[i] = make(chan struct{})
		o.wg.Add(1)
		go func() {
			defer o.wg.Done()
			defer close(o.done[i])
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				o.out[i] = cancelled(ctx.Err())
				return
			}
			defer func() { <-sem }()
			o.out[i] = work(i)
		}()
	}
	return o
}

// get waits for result i.
func (o *ordered[T]) get(i int) T {
	<-o.done[i]
	return o.out[i]
}

// wait waits for every run, so none outlives the command.
func (o *ordered[T]) wait() { o.wg.Wait() }
