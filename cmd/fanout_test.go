package cmd

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// Results come back in argument order however the runs finish, no more
// than jobs run at once, and a run not started before cancellation gets
// the cancelled result.
func TestFanOutOrderedAndBounded(t *testing.T) {
	const n, jobs = 8, 3
	var running, peak atomic.Int32
	o := fanOut(context.Background(), n, jobs, func(i int) int {
		if r := running.Add(1); r > peak.Load() {
			peak.Store(r)
		}
		defer running.Add(-1)
		time.Sleep(time.Duration(n-i) * time.Millisecond) // later ones finish first
		return i * 10
	}, func(error) int { return -1 })
	for i := range n {
		if got := o.get(i); got != i*10 {
			t.Fatalf("result %d = %d, want %d", i, got, i*10)
		}
	}
	o.wait()
	if p := peak.Load(); p > jobs || p == 0 {
		t.Fatalf("%d runs at once, want at most %d", p, jobs)
	}

	// One job: the run holding it cancels and waits, so every other run
	// is still waiting for the job when the context ends.
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	first := make(chan int, 1)
	o = fanOut(ctx, 4, 1, func(i int) int {
		cancel()
		first <- i
		<-release
		return i
	}, func(err error) int {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled with %v", err)
		}
		return -1
	})
	holder := <-first
	for i := range 4 {
		if i != holder && o.get(i) != -1 {
			t.Fatalf("run %d ran after the cancellation", i)
		}
	}
	close(release)
	if got := o.get(holder); got != holder {
		t.Fatalf("the running run returned %d, want %d", got, holder)
	}
	o.wait()
}
