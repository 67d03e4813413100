package store_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/store"
)

// BenchmarkOpenIndex indexes generated sessions of 10k and 100k nodes
// (about 420 bytes a line, a mix of text, block and tool nodes, like
// bench/estimate-gen's). Run with -cpu 1,2: on one P the index is
// sequential, on more it is decoded on GOMAXPROCS workers.
//
//	go test ./store -run '^$' -bench BenchmarkOpenIndex -cpu 1,2 -benchmem
func BenchmarkOpenIndex(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		dir := writeBenchSession(b, n)
		b.Run(fmt.Sprintf("nodes=%dk", n/1000), func(b *testing.B) {
			st, err := os.Stat(filepath.Join(dir, store.NodesFile))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(st.Size())
			for b.Loop() {
				s, err := store.Open(dir, store.OpenOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if s.Len() != n {
					b.Fatalf("%d nodes, want %d", s.Len(), n)
				}
				s.Close()
			}
		})
	}
}

func writeBenchSession(b *testing.B, n int) string {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "s")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, store.NodesFile))
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	words := strings.Repeat("some words of a coding conversation and more ", 10)
	for i := range n {
		id, pred := fmt.Sprintf("n%d", i), fmt.Sprintf("%q", fmt.Sprintf("n%d", i-1))
		if i == 0 {
			pred = "null"
		}
		text := words[:100+(i*37)%300] + " ✨"
		switch i % 4 {
		case 0:
			fmt.Fprintf(w, `{"id":%q,"predecessor":%s,"role":"user","content":%q}`, id, pred, text)
		case 1:
			fmt.Fprintf(w, `{"id":%q,"predecessor":%s,"role":"assistant","content":[{"type":"thinking","text":%q},{"type":"text","text":%q},{"type":"tool_call","id":"c%d","name":"grep","arguments":{"pattern":"x","path":"."}}],"usage":{"input_tokens":100,"output_tokens":20}}`, id, pred, text[:50], text[50:], i)
		case 2:
			fmt.Fprintf(w, `{"id":%q,"predecessor":%s,"role":"tool","tool_call_id":"c%d","content":%q}`, id, pred, i-1, text)
		case 3:
			fmt.Fprintf(w, `{"id":%q,"predecessor":%s,"role":"assistant","content":%q,"created_at":"2026-11-30T00:00:00Z"}`, id, pred, text)
		}
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	st, _ := f.Stat()
	f.Close()
	meta := fmt.Sprintf(`{"format_version":1,"head":"n%d","model":"gpt-4o","nodes_bytes":%d}`, n-1, st.Size())
	if err := os.WriteFile(filepath.Join(dir, store.MetaFile), []byte(meta), 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkOpenSnapshot opens a session through its index snapshot and,
// for comparison, with the snapshot removed (the full index). The session
// is generated (100k nodes), or CTXFOLD_BENCH_SESSION names one (a copy:
// a no-op write leaves the snapshot in it), e.g. the 1M-node session of
// `go run ./bench/estimate-gen -n 1000000 -o /tmp/bench/s1m`:
//
//	go test ./store -run '^$' -bench BenchmarkOpenSnapshot -benchtime 5x
func BenchmarkOpenSnapshot(b *testing.B) {
	dir := os.Getenv("CTXFOLD_BENCH_SESSION")
	if dir == "" {
		dir = writeBenchSession(b, 100_000)
	}
	if _, err := store.Update(b.Context(), dir, store.WriteOptions{}, func(*store.Tx) error { return nil }); err != nil {
		b.Fatal(err)
	}
	open := func(b *testing.B, snapshot bool) {
		for b.Loop() {
			s, err := store.Open(dir, store.OpenOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if s.OpenStats().Snapshot != snapshot {
				b.Fatalf("snapshot used: %+v", s.OpenStats())
			}
			s.Close()
		}
	}
	b.Run("snapshot", func(b *testing.B) { open(b, true) })
	snap := filepath.Join(dir, store.SnapshotFile)
	kept := snap + ".bench"
	if err := os.Rename(snap, kept); err != nil {
		b.Fatal(err)
	}
	defer os.Rename(kept, snap)
	b.Run("full", func(b *testing.B) { open(b, false) })
}
