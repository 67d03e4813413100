package store_test

import (
	"fmt"
	"testing"

	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// BenchmarkOpen indexes a 10,000-node session (what every command and
// every write does first).
func BenchmarkOpen(b *testing.B) {
	dir := newSession(b)
	nodes := make([]transcript.Node, 10_000)
	for i := range nodes {
		n := user(fmt.Sprintf("n%d", i), "", "a short user turn with some words in it")
		if i%2 == 1 {
			n = asst(n.ID, "", "an assistant answer, a little longer than the question it answers")
			n.Usage = &transcript.Usage{InputTokens: 100, OutputTokens: 20}
		}
		nodes[i] = n
	}
	mustAppend(b, dir, store.AppendOptions{StampTime: true}, nodes...)
	b.ResetTimer()
	for b.Loop() {
		s, err := store.Open(dir, store.OpenOptions{})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

// BenchmarkAppend is one locked single-node append (lock, index, write,
// fsync, commit) onto a 1,000-node session.
func BenchmarkAppend(b *testing.B) {
	dir := newSession(b)
	nodes := make([]transcript.Node, 1000)
	for i := range nodes {
		nodes[i] = user(fmt.Sprintf("n%d", i), "", "turn")
	}
	mustAppend(b, dir, store.AppendOptions{}, nodes...)
	i := 0
	for b.Loop() {
		i++
		mustAppend(b, dir, store.AppendOptions{}, user(fmt.Sprintf("x%d", i), "", "more"))
	}
}
